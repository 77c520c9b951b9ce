"""What a torch job sees when something goes wrong on the "chorus" backend: a rank that dies, calls that disagree
across ranks, calls the backend cannot make. Each must raise a RuntimeError that says what happened, promptly."""

import os
import time

import pytest
import torch
import torch.distributed as dist

from world import run_world

# How soon the survivors' pending work must raise after a rank dies (Gloo waits for its whole timeout).
LOST_RANK_DEADLINE_S = 5.0


def _rank_dies_mid_training(rank, n):
    lost = n - 1
    grads = [torch.full((4096,), float(rank)) for _ in range(4)]
    for _ in range(10):
        for work in [dist.all_reduce(g, async_op=True) for g in grads]:
            work.wait()
    dist.barrier()
    if rank == lost:
        os._exit(0)  # no goodbye: as a process killed by the OOM killer
    start = time.monotonic()
    with pytest.raises(RuntimeError) as raised:
        # The survivors go on with their step: their pending work must fail, however it is waited for.
        for _ in range(100000):
            pending = [dist.all_reduce(g, async_op=True) for g in grads]
            pending[-1].get_future().wait()
            for work in pending:
                work.wait()
    elapsed = time.monotonic() - start
    message = str(raised.value)
    assert elapsed < LOST_RANK_DEADLINE_S, (elapsed, message)
    assert any(f"{word} {lost}" in message for word in ("rank(s)", "rank", "peer")), message
    assert "allreduce" in message, message
    # Whatever is called next on the broken group fails at once too, naming the same cause.
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=f"{lost}"):
        dist.all_reduce(torch.ones(3))
    assert time.monotonic() - start < 1.0


def _mismatched_calls(rank, n):
    # Rank 0 reduces 10 elements, the others 20: every rank must raise, none may hang or read past a buffer.
    x = torch.ones(10 if rank == 0 else 20)
    with pytest.raises(RuntimeError, match="does not match across ranks"):
        dist.all_reduce(x)


def _mismatched_dtypes(rank, n):
    x = torch.ones(16, dtype=torch.float32 if rank == 0 else torch.float64)
    with pytest.raises(RuntimeError, match="does not match across ranks"):
        dist.all_reduce(x)


def _unsupported_calls(rank, n):
    with pytest.raises(RuntimeError, match="allreduce.*Short"):
        dist.all_reduce(torch.ones(3, dtype=torch.int16))
    with pytest.raises(RuntimeError, match="chorusAllReduce.*band.*float32"):
        dist.all_reduce(torch.ones(3), op=dist.ReduceOp.BAND)
    with pytest.raises(RuntimeError, match="PREMUL_SUM"):
        dist.all_reduce(torch.ones(3), op=dist._make_nccl_premul_sum(2.0))
    # CUDA tensors are taken exactly where torch has CUDA (this one cannot make a CUDA tensor to try).
    import chorus_torch
    assert chorus_torch.cuda_tensors() == (torch.version.cuda is not None)
    # The group still works after calls it refused.
    y = torch.ones(2)
    dist.all_reduce(y)
    assert y.tolist() == [float(n)] * 2


@pytest.mark.parametrize("n", [2, 3])
def test_a_lost_rank_fails_the_others_promptly(n):
    run_world(_rank_dies_mid_training, n, deadline=60)


@pytest.mark.parametrize("n", [2, 3])
def test_mismatched_counts_raise_on_every_rank(n):
    run_world(_mismatched_calls, n, deadline=60)


def test_mismatched_dtypes_raise_on_every_rank():
    run_world(_mismatched_dtypes, 2, deadline=60)


def test_unsupported_calls_raise_and_leave_the_group_usable():
    run_world(_unsupported_calls, 2, deadline=60)
