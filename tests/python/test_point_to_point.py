"""Send, receive, receive from any rank, and groups."""

import numpy as np
import pytest

import chorus


def test_ring_in_a_group(comm):
    n, me = comm.size, comm.rank
    got = np.empty(4, np.float64)
    with chorus.group():
        comm.send(np.full(4, float(me)), (me + 1) % n)  # to itself in a world of one: allowed in a group
        comm.recv(got, (me - 1) % n)
    assert got.tolist() == [float((me - 1) % n)] * 4


def test_blocking_pairs(comm):
    if comm.size < 2:
        pytest.skip("needs a peer")
    me = comm.rank
    x = np.arange(5, dtype=np.int64)
    if me == 0:
        comm.send(x * 3, 1)
    elif me == 1:
        assert comm.recv(x, 0) is x and x.tolist() == [0, 3, 6, 9, 12]


def test_recv_any(comm):
    if comm.rank == 0:
        sources = []
        buf = np.empty(1, np.int32)
        for _ in range(comm.size - 1):
            sources.append(comm.recv_any(buf))
            assert buf[0] == 10 * sources[-1]
        assert sorted(sources) == list(range(1, comm.size))
    else:
        comm.send(np.array([10 * comm.rank], np.int32), 0)


def test_groups_nest_and_fuse_collectives(comm):
    xs = [np.full(3, i + comm.rank, np.float32) for i in range(3)]
    with chorus.group():
        comm.allreduce(xs[0])
        with chorus.group():
            comm.allreduce(xs[1])
            comm.allreduce(xs[2], "max")
        assert xs[1][0] == 1 + comm.rank  # recorded, not run, until the outermost end
    base = comm.size * (comm.size - 1) // 2
    assert [x[0] for x in xs] == [base, comm.size + base, 2 + comm.size - 1]


def test_an_exception_in_a_group_drops_its_calls(comm):
    x = np.ones(2)
    with pytest.raises(KeyError):
        with chorus.group():
            comm.allreduce(x)
            raise KeyError("stop")
    assert x.tolist() == [1.0, 1.0]
    comm.allreduce(x)  # nothing of the dropped group is left to meet
    assert x.tolist() == [float(comm.size)] * 2
