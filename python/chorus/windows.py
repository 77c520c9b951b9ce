"""Windows with put and signal (chorus.h's one-sided calls, docs/windows.md), as methods of Comm: a Window is a
registered buffer every rank can put into; a put raises a signal at its target, which waits for signals instead of
matching receives. Host buffers only; async_op=True queues a call on the communicator's host stream (a Request)."""

import ctypes

from . import errors
from ._lib import lib
from .buffers import as_buffer
from .dtypes import ITEMSIZE


class WaitSignalDesc(ctypes.Structure):
    _fields_ = [("opCnt", ctypes.c_int), ("peer", ctypes.c_int), ("sigIdx", ctypes.c_int), ("ctx", ctypes.c_int)]


class Window:
    """A registered window (chorusCommWindowRegister, collective); close() deregisters it (collective too)."""

    def __init__(self, comm, buffer):
        handle = ctypes.c_void_p()
        size = buffer.count * ITEMSIZE[buffer.dtype]
        errors.check(lib.chorusCommWindowRegister(comm._live(), buffer.address if size else None, size,
                                                  ctypes.byref(handle), 0))
        self._comm = comm
        self._buffer = buffer  # keeps the memory alive while peers may put into it
        self.handle = handle.value

    def flush(self):
        """chorusWindowFlush: returns once this rank's blocking puts on the window are complete locally."""
        errors.check(lib.chorusWindowFlush(self._comm._live(), self.handle))

    def close(self):
        """chorusCommWindowDeregister (collective). Idempotent."""
        if self.handle is not None:
            handle, self.handle = self.handle, None
            errors.check(lib.chorusCommWindowDeregister(self._comm._live(), handle))
            self._buffer = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class SharedMemory:
    """chorusMemAlloc: nbytes of host memory the host's other processes can map, so that their puts into a window
    over it are their own copies (docs/windows.md). `buffer` is a writable ctypes array over it (numpy.frombuffer,
    memoryview); close() frees it (chorusMemFree) once no window and no view uses it."""

    def __init__(self, nbytes):
        ptr = ctypes.c_void_p()
        errors.check(lib.chorusMemAlloc(ctypes.byref(ptr), nbytes))
        self._ptr = ptr.value
        self.nbytes = nbytes
        self.buffer = (ctypes.c_char * nbytes).from_address(ptr.value)

    def close(self):
        """chorusMemFree. Idempotent."""
        if self._ptr is not None:
            ptr, self._ptr, self.buffer = self._ptr, None, None
            errors.check(lib.chorusMemFree(ptr))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Windows:
    """Mixed into Comm, which provides _submit and _live."""

    def window(self, buf):
        """chorusCommWindowRegister, on every rank (sizes may differ): a Window over buf, used in place."""
        return Window(self, as_buffer(buf, True))

    def put_signal(self, buf, peer, window, offset=0, *, sig_idx=0, ctx=0, async_op=False):
        """chorusPutSignal: writes buf into peer's part of window at byte offset `offset`, then raises signal
        (sig_idx, ctx) there."""
        b = as_buffer(buf, False)
        return self._submit(lib.chorusPutSignal, (b.address, b.count, b.dtype, peer, window.handle, offset, sig_idx,
                                                  ctx, 0), (b,), None, async_op, None)

    def signal(self, peer, *, sig_idx=0, ctx=0, async_op=False):
        """chorusSignal: raises (sig_idx, ctx) at peer after every put this rank made to it before."""
        return self._submit(lib.chorusSignal, (peer, sig_idx, ctx, 0), (), None, async_op, None)

    def wait_signal(self, waits, *, async_op=False):
        """chorusWaitSignal: waits is a list of (peer, count) or (peer, count, sig_idx, ctx); returns once each
        has seen count signals from peer, and consumes them."""
        descs = (WaitSignalDesc * len(waits))()
        for i, w in enumerate(waits):
            peer, count, sig, ctx = (tuple(w) + (0, 0))[:4]
            descs[i] = WaitSignalDesc(count, peer, sig, ctx)
        # The descs travel with a queued call (async_op): the library copies them when the call is made.
        return self._submit(lib.chorusWaitSignal, (len(waits), descs), (), None, async_op, None)
