"""Windows with put and signal: puts into every rank's window, a group that puts and waits, a queued put."""

import numpy as np

import chorus


def test_put_into_every_rank(comm):
    n, me = comm.size, comm.rank
    inbox = np.full(4 * n, -1.0, np.float32)
    with comm.window(inbox) as win:
        for k in range(n):
            to = (me + k) % n
            comm.put_signal(np.full(4, float(10 * me + to), np.float32), to, win, 4 * 4 * me, sig_idx=1)
        comm.wait_signal([(p, 1, 1, 0) for p in range(n)])
        win.flush()
        assert inbox.tolist() == [float(10 * p + me) for p in range(n) for _ in range(4)]


def test_put_in_a_group_and_queued(comm):
    n, me = comm.size, comm.rank
    nxt, prev = (me + 1) % n, (me - 1) % n
    inbox = np.zeros(2, np.int64)
    with comm.window(inbox) as win:
        src = np.array([me, me + 100], np.int64)  # alive until the group and the queued put have run
        with chorus.group():
            comm.wait_signal([(prev, 1)])  # recorded first, runs after the group's puts
            comm.put_signal(src[:1], nxt, win, 0)
        assert inbox[0] == prev
        request = comm.put_signal(src[1:], nxt, win, 8, sig_idx=2, async_op=True)
        comm.wait_signal([(prev, 1, 2, 0)], async_op=True).wait()
        request.wait()
        assert inbox[1] == prev + 100


def test_put_into_shared_memory(comm):
    n, me = comm.size, comm.rank
    with chorus.SharedMemory(4 * 4 * n) as mem:
        inbox = np.frombuffer(mem.buffer, np.float32)
        inbox[:] = -1.0
        with comm.window(inbox) as win:
            for k in range(n):
                to = (me + k) % n
                comm.put_signal(np.full(4, float(10 * me + to), np.float32), to, win, 4 * 4 * me, sig_idx=1)
            comm.wait_signal([(p, 1, 1, 0) for p in range(n)])
            assert inbox.tolist() == [float(10 * p + me) for p in range(n) for _ in range(4)]
        del inbox
