"""Non-blocking calls (async_op=True): Requests on the communicator's host stream."""

import gc

import numpy as np
import pytest

import chorus


def test_wait_and_test(comm):
    x = np.full(1000, comm.rank + 1.0)
    r = comm.allreduce(x, async_op=True)
    assert isinstance(r, chorus.Request)
    while not r.test():
        pass
    assert r.test() and r.wait() is x
    assert x[0] == comm.size * (comm.size + 1) / 2


def test_many_in_flight_keep_their_order(comm):
    xs = [np.full(8, float(i)) for i in range(6)]
    requests = [comm.allreduce(x, async_op=True) for x in xs]
    requests.append(comm.allgather(np.full(2, comm.rank, np.int32), async_op=True))
    requests.append(comm.barrier(async_op=True))
    *reduced, gathered, nothing = chorus.wait_all(requests)
    assert [r[0] for r in reduced] == [float(i * comm.size) for i in range(6)]
    assert gathered.ravel().tolist() == [r for r in range(comm.size) for _ in range(2)]
    assert nothing is None
    y = np.ones(2)
    comm.allreduce(y)  # a blocking call after queued ones runs after them
    assert y[0] == comm.size


def test_async_in_a_group_and_recv_any(comm):
    n, me = comm.size, comm.rank
    got = np.empty(3, np.int64)
    with chorus.group():
        sent = comm.send(np.full(3, me, np.int64), (me + 1) % n, async_op=True)
        received = comm.recv(got, (me - 1) % n, async_op=True)
        with pytest.raises(chorus.ChorusError, match="inside its group") as caught:
            received.test()
        assert caught.value.code == chorus.Result.INVALID_USAGE
    assert sent.wait() is None and received.wait() is got
    assert got.tolist() == [(me - 1) % n] * 3
    if n > 1:
        if me == 1:
            comm.send(np.array([5], np.int32), 0)
        elif me == 0:
            r = comm.recv_any(np.empty(1, np.int32), async_op=True)
            assert r.wait() == 1


def test_a_dropped_request_waits_for_its_call(comm):
    comm.allreduce(np.ones(1 << 16), async_op=True)  # dropped at once: its buffer must outlive the call
    gc.collect()
    comm.barrier()


def test_async_errors_raise_on_the_call_or_the_wait(comm):
    with pytest.raises(chorus.ChorusError) as caught:
        comm.broadcast(np.ones(2), root=-1, async_op=True)  # argument checks run before anything is queued
    assert caught.value.code == chorus.Result.INVALID_ARGUMENT
    with pytest.raises(ValueError, match="stream="):
        comm.allreduce(np.ones(2), stream=7)
