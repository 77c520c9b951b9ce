"""Communicators: from the environment, from a unique id, split, shrink, grow, close and abort."""

import os
import pickle
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import chorus


def test_from_env_matches_the_launcher(comm):
    assert comm.rank == int(os.environ["CHORUS_RANK"])
    assert comm.size == int(os.environ["CHORUS_WORLD_SIZE"])
    assert repr(comm) == f"<chorus.Comm rank {comm.rank} of {comm.size}>"
    assert comm.handle != 0


def _shared_unique_id(comm):
    """Rank 0's new unique id, handed to every rank through comm."""
    raw = np.frombuffer(bytes(chorus.get_unique_id()), np.uint8).copy() if comm.rank == 0 else np.empty(128, np.uint8)
    comm.broadcast(raw)
    return chorus.UniqueId(raw.tobytes())


def test_unique_id_comm(comm):
    uid = _shared_unique_id(comm)
    assert pickle.loads(pickle.dumps(uid)) == uid and "bytes" in repr(uid)
    with chorus.Comm(uid, comm.size, comm.rank, comm_name="by-id") as other:
        assert (other.rank, other.size) == (comm.rank, comm.size)
        x = np.ones(3, np.int32)
        other.allreduce(x)
        assert x.tolist() == [comm.size] * 3
        with pytest.raises(chorus.ChorusError, match="comm by-id"):
            other.reduce(x, root=-2)
    assert other.closed
    other.close()  # idempotent
    with pytest.raises(chorus.ChorusError, match="closed") as caught:
        other.allreduce(x)
    assert caught.value.code == chorus.Result.INVALID_USAGE
    with pytest.raises(ValueError, match="128 bytes"):
        chorus.UniqueId(b"short")


def test_split(comm):
    me, n = comm.rank, comm.size
    # Two colors, ranked in reverse; the last rank of an odd world joins none.
    color = None if (n % 2 and me == n - 1) else me % 2
    child = comm.split(color, key=-me)
    if color is None:
        assert child is None
    else:
        with child:
            members = [r for r in range(n - n % 2) if r % 2 == color]
            assert child.size == len(members) and child.rank == members[::-1].index(me)
            x = np.array([me], np.int64)
            child.allreduce(x)
            assert x[0] == sum(members)
    comm.barrier()


def test_shrink_leaves_out_the_last_rank(comm):
    if comm.size < 2:
        pytest.skip("needs a rank to leave out")
    last = comm.size - 1
    if comm.rank != last:
        with comm.shrink(exclude=[last]) as small:
            assert small.size == comm.size - 1 and small.rank == comm.rank
            x = np.ones(1)
            small.allreduce(x)
            assert x[0] == comm.size - 1
    comm.barrier()


def test_abort_ends_a_blocked_call(comm):
    if comm.size < 2:
        pytest.skip("needs a peer that never sends")
    # Pairs that connect anew (split_share=0), so that an abort leaves this world's connections alone.
    pair = comm.split(comm.rank // 2 if comm.rank < comm.size - comm.size % 2 else None, split_share=0)
    if pair is not None:
        if pair.rank == 0:
            threading.Timer(0.3, pair.abort).start()
            start = time.monotonic()
            with pytest.raises(chorus.ChorusError) as caught:
                pair.recv(np.empty(1), 1)
            assert caught.value.code == chorus.Result.REMOTE_ERROR and time.monotonic() - start < 10
            assert pair.closed
        comm.barrier()  # the peer closes its side once the abort is done
        pair.close()
    else:
        comm.barrier()


def test_register(comm):
    x = np.zeros(1024, np.float32)
    with comm.register(x):
        comm.allreduce(x)
    comm.register(x).close()


_JOINER = """
import array, sys
import chorus
uid, new_ranks, rank = chorus.UniqueId(bytes.fromhex(sys.argv[1])), int(sys.argv[2]), int(sys.argv[3])
with chorus.Comm.join_grown(uid, new_ranks, rank, timeout_seconds=30) as grown:
    x = array.array("q", [grown.rank])
    grown.allreduce(x)
    assert x[0] == grown.size * (grown.size - 1) // 2, x
"""


def test_grow_by_one_process(comm):
    if comm.size != 2:
        pytest.skip("one world size is enough: it starts a process")
    uid = comm.grow_id() if comm.rank == 0 else None
    joiner = None
    if comm.rank == 0:
        joiner = subprocess.Popen([sys.executable, "-c", _JOINER, bytes(uid).hex(), "1", str(comm.size)])
    try:
        with comm.grow(1, uid) as grown:
            assert grown.size == comm.size + 1 and grown.rank == comm.rank
            x = np.array([grown.rank], np.int64)
            grown.allreduce(x)
            assert x[0] == 3
    finally:
        if joiner is not None:
            assert joiner.wait(timeout=60) == 0
