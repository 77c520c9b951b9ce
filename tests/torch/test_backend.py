"""torch.distributed's calls on the "chorus" backend, checked against exact references (CPU tensors)."""

import pytest
import torch
import torch.distributed as dist

from world import run_world

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8, torch.uint8, torch.int32,
          torch.int64]


def _all_reduce(rank, n):
    ops = {dist.ReduceOp.SUM: lambda v: sum(v), dist.ReduceOp.MAX: max, dist.ReduceOp.MIN: min,
           dist.ReduceOp.PRODUCT: lambda v: __import__("math").prod(v)}
    for dtype in DTYPES:
        for op, ref in ops.items():
            x = torch.full((37,), rank + 1, dtype=dtype)
            dist.all_reduce(x, op=op)
            want = ref([r + 1 for r in range(n)])
            assert torch.equal(x, torch.full((37,), want, dtype=dtype)), (dtype, op, x[:4])
    for op, fn in [(dist.ReduceOp.BAND, lambda a, b: a & b), (dist.ReduceOp.BOR, lambda a, b: a | b),
                   (dist.ReduceOp.BXOR, lambda a, b: a ^ b)]:
        x = torch.full((5,), 1 << rank, dtype=torch.int64)
        dist.all_reduce(x, op=op)
        want = 1
        for r in range(1, n):
            want = fn(want, 1 << r)
        assert x.tolist() == [want] * 5, (op, x)
    b = torch.tensor([rank == 0, True, False])
    dist.all_reduce(b)  # SUM of bools: OR
    assert b.tolist() == [True, True, False]
    # Non-contiguous: every other element of a matrix column.
    m = torch.full((6, 4), float(rank + 1))
    col = m[:, 1]
    dist.all_reduce(col)
    assert torch.equal(m[:, 1], torch.full((6,), float(n * (n + 1) // 2)))
    assert torch.equal(m[:, 0], torch.full((6,), float(rank + 1)))


def _rooted_and_gathers(rank, n):
    t = torch.arange(10, dtype=torch.float32) * (rank + 1)
    dist.broadcast(t, src=n - 1)
    assert torch.equal(t, torch.arange(10, dtype=torch.float32) * n)
    r = torch.ones(4, dtype=torch.int32) * (rank + 1)
    dist.reduce(r, dst=0)
    if rank == 0:
        assert r.tolist() == [n * (n + 1) // 2] * 4
    outs = [torch.empty(3) for _ in range(n)]
    dist.all_gather(outs, torch.full((3,), float(rank)))
    assert [o[0].item() for o in outs] == list(range(n))
    flat = torch.empty(3 * n)
    dist.all_gather_into_tensor(flat, torch.full((3,), float(rank)))
    assert flat.tolist() == [float(r) for r in range(n) for _ in range(3)]
    gathered = [torch.empty(2) for _ in range(n)] if rank == 1 else None
    dist.gather(torch.full((2,), float(rank)), gather_list=gathered, dst=1)
    if rank == 1:
        assert [g[0].item() for g in gathered] == list(range(n))
    got = torch.empty(2)
    dist.scatter(got, scatter_list=[torch.full((2,), float(10 + r)) for r in range(n)] if rank == 0 else None, src=0)
    assert got.tolist() == [10.0 + rank] * 2
    rs = torch.empty(2)
    dist.reduce_scatter(rs, [torch.full((2,), float(p + rank)) for p in range(n)])
    assert rs.tolist() == [float(n * rank + n * (n - 1) // 2)] * 2
    rst = torch.empty(2)
    dist.reduce_scatter_tensor(rst, torch.arange(2 * n, dtype=torch.float32))
    assert rst.tolist() == [float(n * (2 * rank)), float(n * (2 * rank + 1))]
    lists = [[torch.empty(2), torch.empty(3, 1)] for _ in range(n)]
    dist.all_gather_coalesced(lists, [torch.full((2,), float(rank)), torch.full((3, 1), float(10 + rank))])
    assert [(l[0][0].item(), l[1][2, 0].item()) for l in lists] == [(float(r), float(10 + r)) for r in range(n)]
    avg = torch.full((3,), float(rank))
    dist.all_reduce(avg, op=dist.ReduceOp.AVG)
    assert avg.tolist() == [(n - 1) / 2] * 3
    # Sparse: rank r holds entry (r, r) = r + 1 and entry (0, 1) = 1; rank 1 none when n > 1 (zero entries work).
    idx = [[rank, 0], [rank, 1]] if rank != 1 else [[], []]
    val = [float(rank + 1), 1.0] if rank != 1 else []
    sp = torch.sparse_coo_tensor(torch.tensor(idx, dtype=torch.int64).reshape(2, -1), torch.tensor(val), (n, n))
    dist.all_reduce(sp)
    want = torch.zeros(n, n)
    for r in range(n):
        if r != 1:
            want[r, r] += r + 1
            want[0, 1] += 1
    assert torch.equal(sp.to_dense(), want), sp.to_dense()
    # recv from any source: rank 0 takes one message from every other rank, in whatever order they come.
    if rank == 0:
        senders = []
        for _ in range(n - 1):
            got = torch.empty(3)
            senders.append(dist.recv(got))
            assert got.tolist() == [float(senders[-1])] * 3
        assert sorted(senders) == list(range(1, n))
    else:
        dist.send(torch.full((3,), float(rank)), dst=0)
    # Then one more from the last rank (after the barrier: sent earlier, it could be taken before another's first).
    dist.barrier()
    if rank == 0 and n > 1:
        work = dist.irecv(torch.empty(3))
        work.wait()
        assert work._source_rank() == n - 1
    elif rank == n - 1 and n > 1:
        dist.send(torch.full((3,), float(rank)), dst=0)


def _all_to_all(rank, n):
    inp = torch.arange(n * 2, dtype=torch.int64) + 100 * rank
    out = torch.empty(n * 2, dtype=torch.int64)
    dist.all_to_all_single(out, inp)
    assert out.tolist() == [100 * p + 2 * rank + k for p in range(n) for k in range(2)]
    # Uneven: rank r sends r+1+p rows to rank p.
    in_splits = [rank + 1 + p for p in range(n)]
    out_splits = [p + 1 + rank for p in range(n)]
    inp = torch.full((sum(in_splits), 3), float(rank))
    out = torch.empty((sum(out_splits), 3))
    dist.all_to_all_single(out, inp, output_split_sizes=out_splits, input_split_sizes=in_splits)
    expect = [float(p) for p in range(n) for _ in range(out_splits[p])]
    assert out[:, 0].tolist() == expect
    outs = [torch.empty(p + 1) for p in range(n)]
    dist.all_to_all(outs, [torch.full((rank + 1,), float(rank * 10 + p)) for p in range(n)])
    assert [o[0].item() for o in outs] == [float(p * 10 + rank) for p in range(n)]


def _point_to_point_and_async(rank, n):
    nxt, prv = (rank + 1) % n, (rank - 1) % n
    got = torch.empty(5)
    ops = [dist.P2POp(dist.isend, torch.full((5,), float(rank)), nxt), dist.P2POp(dist.irecv, got, prv)]
    for req in dist.batch_isend_irecv(ops):
        req.wait()
    assert got.tolist() == [float(prv)] * 5
    if rank == 0:
        dist.send(torch.arange(4.0), dst=1)
    elif rank == 1:
        t = torch.empty(4)
        dist.recv(t, src=0)
        assert t.tolist() == [0.0, 1.0, 2.0, 3.0]
    x = torch.ones(1000)
    work = dist.all_reduce(x, async_op=True)
    work.wait()
    assert x[0].item() == n and work.is_completed()
    fut = dist.all_reduce(torch.ones(3), async_op=True).get_future()
    assert fut.wait()[0].tolist() == [float(n)] * 3
    dist.barrier()
    dist.monitored_barrier()


def _async_progress(rank, n):
    # An async call progresses while the caller computes: it completes without wait() being called.
    import time
    big = torch.ones(4 << 20)
    work = dist.all_reduce(big, async_op=True)
    product = torch.zeros(64, 64)
    deadline = time.monotonic() + 30
    while not work.is_completed():
        product += torch.ones(64, 64) @ torch.ones(64, 64)  # the caller's own work meanwhile
        assert time.monotonic() < deadline, "the async allreduce made no progress without wait()"
    assert work.is_success() and big[0].item() == n and big[-1].item() == n
    work.wait()


def _subgroups(rank, n):
    import chorus_torch._C as C
    pending = dist.all_reduce(torch.ones(1000), async_op=True)  # a split is ordered after calls in flight
    evens = dist.new_group([r for r in range(n) if r % 2 == 0])
    assert (evens == dist.GroupMember.NON_GROUP_MEMBER) == (rank % 2 == 1)
    tail = dist.new_group(sorted({n - 1, 0}, reverse=True))  # given out of order: torch sorts the ranks
    everyone = dist.new_group()
    pending.wait()
    if rank % 2 == 0:
        assert C.is_chorus(evens) and dist.get_rank(evens) == rank // 2
        x = torch.ones(3)
        dist.all_reduce(x, group=evens)
        assert x[0].item() == len(range(0, n, 2))
        t = torch.full((2,), float(rank))
        dist.broadcast(t, src=0, group=evens)  # src is a global rank
        assert t.tolist() == [0.0, 0.0]
    if rank in (0, n - 1):
        y = torch.full((4,), float(rank))
        dist.all_reduce(y, op=dist.ReduceOp.MAX, group=tail)
        assert y[0].item() == n - 1
    z = torch.ones(2, dtype=torch.int64)
    work = dist.all_reduce(z, group=everyone, async_op=True)
    w = torch.ones(2, dtype=torch.int64)
    dist.all_reduce(w)
    work.wait()
    assert z.tolist() == [n, n] and w.tolist() == [n, n]
    dist.destroy_process_group(evens)
    dist.barrier(group=everyone)


def _subgroups_of_another_backend(rank, n):
    # Under a gloo default group a chorus subgroup meets through torch's store.
    sub = dist.new_group(list(range(n)), backend="chorus")
    x = torch.full((5,), float(rank + 1))
    dist.all_reduce(x, group=sub)
    assert x[0].item() == n * (n + 1) / 2


def _every_call_every_dtype(rank, n):
    """Each call once per dtype (bool where the call moves data or SUM means OR), with small exact values."""
    for dtype in DTYPES + [torch.bool]:
        def full(shape, v):
            return torch.full(shape, v if dtype != torch.bool else bool(v % 2), dtype=dtype)
        name = str(dtype)
        t = full((5,), rank + 1)
        dist.broadcast(t, src=n - 1)
        assert torch.equal(t, full((5,), n)), name
        r = full((3,), rank + 1)
        dist.reduce(r, dst=0)
        if rank == 0 and dtype != torch.bool:
            assert torch.equal(r, full((3,), n * (n + 1) // 2)), name
        outs = [full((2,), 0) for _ in range(n)]
        dist.all_gather(outs, full((2,), rank + 1))
        assert all(torch.equal(o, full((2,), p + 1)) for p, o in enumerate(outs)), name
        flat = full((2 * n,), 0)
        dist.all_gather_into_tensor(flat, full((2,), rank + 1))
        assert torch.equal(flat, torch.cat([full((2,), p + 1) for p in range(n)])), name
        gathered = [full((2,), 0) for _ in range(n)] if rank == 0 else None
        dist.gather(full((2,), rank + 1), gather_list=gathered, dst=0)
        if rank == 0:
            assert all(torch.equal(g, full((2,), p + 1)) for p, g in enumerate(gathered)), name
        got = full((2,), 0)
        dist.scatter(got, scatter_list=[full((2,), p + 1) for p in range(n)] if rank == 0 else None, src=0)
        assert torch.equal(got, full((2,), rank + 1)), name
        if dtype != torch.bool:
            rs = full((2,), 0)
            dist.reduce_scatter(rs, [full((2,), p + 1) for p in range(n)])
            assert torch.equal(rs, full((2,), n * (rank + 1))), name
            rst = full((2,), 0)
            dist.reduce_scatter_tensor(rst, torch.cat([full((2,), p + 1) for p in range(n)]))
            assert torch.equal(rst, full((2,), n * (rank + 1))), name
        a2a = full((n,), 0)
        dist.all_to_all_single(a2a, torch.cat([full((1,), rank + 1) for _ in range(n)]))
        assert torch.equal(a2a, torch.cat([full((1,), p + 1) for p in range(n)])), name
        if n > 1:
            nxt, prv = (rank + 1) % n, (rank - 1) % n
            into = full((3,), 0)
            reqs = dist.batch_isend_irecv([dist.P2POp(dist.irecv, into, prv),
                                           dist.P2POp(dist.isend, full((3,), rank + 1), nxt)])
            for q in reqs:
                q.wait()
            assert torch.equal(into, full((3,), prv + 1)), name


def _every_kind_of_call(rank, n):
    """Each part on one world per size (a world's processes take seconds to start; its calls, milliseconds)."""
    _every_call_every_dtype(rank, n)
    _all_reduce(rank, n)
    _subgroups(rank, n)
    if n in (2, 3):
        _rooted_and_gathers(rank, n)
        _all_to_all(rank, n)
        _point_to_point_and_async(rank, n)
        _async_progress(rank, n)


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_every_call_in_every_dtype_and_op(n):
    run_world(_every_kind_of_call, n, deadline=180)


def test_chorus_subgroup_of_a_gloo_world():
    run_world(_subgroups_of_another_backend, 2, backend="gloo")
