"""Elastic training on the "chorus" backend: a rank lost mid-step (no goodbye), the survivors shrink their group
with chorus_torch.shrink and go on with correct results; a healthy group shrunk by a list, then grown back."""

import os
import time

import torch
import torch.distributed as dist

import chorus_torch
from world import run_world

# The bound: a survivor has its new group within 5 s of its error.
SHRINK_DEADLINE_S = 5.0


def _lose_a_rank_and_go_on(rank, n):
    lost = 1
    group = dist.group.WORLD
    x = torch.full((65536,), float(rank + 1))
    dist.all_reduce(x, group=group)
    assert x[0].item() == n * (n + 1) / 2
    if rank == lost:
        os._exit(0)  # no goodbye: as a process killed by the OOM killer
    try:
        for _ in range(100000):
            dist.all_reduce(torch.ones(65536), group=group)
        raise AssertionError("no call failed after a rank was lost")
    except RuntimeError:
        start = time.monotonic()
        group = chorus_torch.shrink(group)
        elapsed = time.monotonic() - start
    assert elapsed < SHRINK_DEADLINE_S, elapsed
    survivors = [r for r in range(n) if r != lost]
    assert group.size() == n - 1 and group.rank() == survivors.index(rank)
    y = torch.full((65536,), float(rank + 1))
    dist.all_reduce(y, group=group)
    assert y[7].item() == sum(r + 1 for r in survivors), y[7].item()
    # Further shrinks work on the shrunk group too: leave out its last rank (it does not call).
    if group.rank() == group.size() - 1:
        return
    smaller = chorus_torch.shrink(group, exclude=[group.size() - 1])
    z = torch.ones(8)
    dist.all_reduce(z, group=smaller)
    assert z[0].item() == n - 2


def _shrink_then_grow_back(rank, n):
    group = dist.group.WORLD
    if rank == n - 1:
        return  # excluded: it does not call
    shrunk = chorus_torch.shrink(group, exclude=[n - 1])
    assert shrunk.size() == n - 1
    # Growing needs a new process; here the ranks grow the shrunk group by none, which exercises the same path.
    grown = chorus_torch.grow(shrunk, 0, chorus_torch.grow_id(shrunk) if shrunk.rank() == 0 else None)
    t = torch.ones(4)
    dist.all_reduce(t, group=grown)
    assert t[0].item() == n - 1


def test_survivors_shrink_after_a_lost_rank_and_go_on():
    run_world(_lose_a_rank_and_go_on, 4, deadline=90)


def test_a_healthy_group_shrinks_by_a_list_and_grows():
    run_world(_shrink_then_grow_back, 3, deadline=90)
