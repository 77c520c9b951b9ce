"""Every collective on numpy arrays, in place and into out, checked against exact references."""

import functools
import math
import operator

import numpy as np
import pytest

import chorus

DTYPES = [np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64, np.float16, np.float32, np.float64]
OPS = {"sum": sum, "prod": math.prod, "max": max, "min": min}


@pytest.mark.parametrize("dtype", DTYPES)
def test_allreduce_every_dtype_and_op(comm, dtype):
    values = [r % 3 + 1 for r in range(comm.size)]  # small: the product fits int8
    for name, ref in OPS.items():
        x = np.full(17, values[comm.rank], dtype=dtype)
        assert comm.allreduce(x, name) is x
        assert (x == np.array(ref(values), dtype=dtype)).all(), (name, x)


def test_allreduce_out_ops_by_constant_and_avg(comm):
    n = comm.size
    x = np.arange(6, dtype=np.float64) + comm.rank
    y = np.empty_like(x)
    assert comm.allreduce(x, chorus.AVG, out=y) is y
    assert np.array_equal(y, np.arange(6) + (n - 1) / 2)
    assert np.array_equal(x, np.arange(6) + comm.rank)  # out of place: buf untouched
    for op in (chorus.ReduceOp.MAX, int(chorus.MIN), "Max"):
        comm.allreduce(np.ones(2, np.int32), op)


def test_allreduce_bitwise(comm):
    x = np.array([1 << comm.rank, 0xFF], dtype=np.uint64)
    comm.allreduce(x, chorus.BOR)
    assert x.tolist() == [(1 << comm.size) - 1, 0xFF]
    y = np.array([1 << comm.rank], dtype=np.int32)
    comm.allreduce(y, "bxor")
    assert y[0] == (1 << comm.size) - 1
    def bits(r):
        return 0b111 ^ (1 << (r % 3))

    z = np.array([bits(comm.rank)], dtype=np.uint8)
    comm.allreduce(z, "band")
    assert z[0] == functools.reduce(operator.and_, map(bits, range(comm.size)))


def test_broadcast_in_place_and_out(comm):
    root = comm.size - 1
    x = np.arange(10, dtype=np.float32) * (comm.rank + 1)
    assert comm.broadcast(x, root=root) is x
    assert np.array_equal(x, np.arange(10, dtype=np.float32) * comm.size)
    out = np.zeros((2, 5), dtype=np.int64)
    comm.broadcast(np.full((2, 5), 7, np.int64) if comm.rank == 0 else None, out=out)
    assert (out == 7).all()


def test_reduce(comm):
    for root in {0, comm.size - 1}:
        x = np.full(4, comm.rank + 1, dtype=np.int32)
        got = comm.reduce(x, root=root)
        if comm.rank == root:
            assert got is x and x.tolist() == [comm.size * (comm.size + 1) // 2] * 4
        else:
            assert got is None and x.tolist() == [comm.rank + 1] * 4
    out = np.zeros(3)
    got = comm.reduce(np.full(3, 2.0), "prod", root=0, out=out)
    assert (got is out and out.tolist() == [2.0 ** comm.size] * 3) if comm.rank == 0 else got is None


def test_allgather(comm):
    got = comm.allgather(np.full((2, 3), comm.rank, dtype=np.int32))
    assert got.shape == (comm.size, 2, 3) and got.dtype == np.int32
    assert [int(g[0, 0]) for g in got] == list(range(comm.size))
    out = np.empty(3 * comm.size, dtype=np.float32)
    assert comm.allgather(np.full(3, comm.rank, np.float32), out=out) is out
    assert out.tolist() == [float(r) for r in range(comm.size) for _ in range(3)]


def test_reduce_scatter(comm):
    n = comm.size
    x = np.arange(2 * n, dtype=np.float64).reshape(n, 2) + comm.rank
    got = comm.reduce_scatter(x)
    assert got.shape == (1, 2)
    base = n * (n - 1) / 2
    assert got.ravel().tolist() == [n * 2 * comm.rank + base, n * (2 * comm.rank + 1) + base]
    out = np.empty(2, np.int64)
    comm.reduce_scatter(np.ones(2 * n, np.int64), "max", out=out)
    assert out.tolist() == [1, 1]


def test_alltoall(comm):
    n = comm.size
    x = np.array([100 * comm.rank + j for j in range(n) for _ in range(2)], dtype=np.int64)
    got = comm.alltoall(x)
    assert got.tolist() == [100 * i + comm.rank for i in range(n) for _ in range(2)]


def test_alltoallv_uneven(comm):
    n, me = comm.size, comm.rank

    def count(s, d):  # elements rank s sends to rank d: uneven, and zero for some pairs
        return (s + 2 * d + 1) % 4

    send_counts = [count(me, d) for d in range(n)]
    recv_counts = [count(s, me) for s in range(n)]
    x = np.concatenate([np.full(count(me, d), 100 * me + d, np.int32) for d in range(n)])
    got = comm.alltoallv(x, send_counts, recv_counts)
    assert got.tolist() == [100 * s + me for s in range(n) for _ in range(count(s, me))]
    with pytest.raises(ValueError, match="reach"):
        comm.alltoallv(x[:0], [5] * n, recv_counts)


def test_gather_and_scatter(comm):
    n = comm.size
    root = n // 2
    got = comm.gather(np.full(2, comm.rank, np.float32), root=root)
    if comm.rank == root:
        assert got.tolist() == [[float(r)] * 2 for r in range(n)]
    else:
        assert got is None
    out = np.empty(3, np.uint8)
    src = np.repeat(np.arange(n, dtype=np.uint8) + 10, 3) if comm.rank == 0 else None
    assert comm.scatter(src, out=out) is out
    assert out.tolist() == [10 + comm.rank] * 3


def test_barrier_and_count_zero(comm):
    assert comm.barrier() is None
    empty = np.empty(0, np.float32)
    comm.allreduce(empty)
    assert comm.allgather(empty).shape == (comm.size, 0)


# fp8 codes: 1.0, 2.0, 448 (e4m3's largest) and 57344 (e5m2's largest).
E4M3_ONE, E4M3_TWO, E4M3_MAX = 0x38, 0x40, 0x7E
E5M2_ONE, E5M2_MAX, E5M2_INF = 0x3C, 0x7B, 0x7C


def test_fp8_as_uint8_with_dtype(comm):
    n = comm.size
    x = np.array([E4M3_ONE, E4M3_MAX, 0x80], dtype=np.uint8)  # 1.0, 448, -0
    assert comm.allreduce(x, "sum", dtype="float8e4m3") is x
    sums = {1: E4M3_ONE, 2: E4M3_TWO, 4: 0x48}  # 1, 2, 4
    assert x.tolist() == [sums[n], E4M3_MAX, 0x80]  # 448 * n saturates to 448; -0 stays -0
    y = np.array([E5M2_INF, E5M2_ONE], dtype=np.uint8)
    comm.allreduce(y, "max", dtype=chorus.DataType.FLOAT8E5M2)
    assert y.tolist() == [E5M2_MAX if n > 1 else E5M2_INF, E5M2_ONE]  # re-encoded: infinity saturates
    z = np.array([E5M2_INF], dtype=np.uint8)
    comm.allreduce(z, "sum", dtype="float8_e5m2")
    assert z.tolist() == [E5M2_MAX if n > 1 else E5M2_INF]  # a sum saturates infinity (a world of one copies)
    with pytest.raises(ValueError):
        comm.allreduce(np.zeros(2, np.float16), dtype="float8e4m3")
