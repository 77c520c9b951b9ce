"""Comm: a communicator (chorusComm_t) for its lifetime: made from the launcher's environment or from a unique id,
split, shrunk or grown into others, closed or aborted. Its calls are in collectives.py and point_to_point.py."""

import ctypes
import threading
import weakref

from . import errors
from ._config import config_pointer, make_config
from ._lib import UniqueIdStruct, lib
from .buffers import as_buffer, stream_handle
from .collectives import Collectives
from .dtypes import ITEMSIZE
from .groups import defer, in_group
from .point_to_point import PointToPoint
from .request import Request
from .unique_id import as_unique_id, from_struct
from .windows import Windows

SPLIT_NOCOLOR = -1
_SHRINK_DEFAULT, _SHRINK_ABORT = 0, 1


class _Native:
    """The handle and the host stream, apart from the Comm so that a finalizer can destroy them."""
    __slots__ = ("handle", "host_stream", "lock")

    def __init__(self, handle):
        self.handle = handle
        self.host_stream = None
        self.lock = threading.Lock()

    def stream(self):
        """The host stream the communicator's async_op calls queue on, made at the first."""
        if self.host_stream is None:
            with self.lock:
                if self.host_stream is None:
                    s = ctypes.c_void_p()
                    errors.check(lib.chorusHostStreamCreate(ctypes.byref(s)))
                    self.host_stream = s.value
        return self.host_stream

    def end(self, abort):
        """Destroys (or aborts) the communicator and its host stream; returns the communicator's result. The
        stream's result is left out: a queued call's failure was its Request's to raise."""
        with self.lock:
            handle, stream = self.handle, self.host_stream
            self.handle = self.host_stream = None
        if stream is not None and not abort:
            lib.chorusHostStreamDestroy(stream)  # the queued calls run first
            stream = None
        code = 0
        if handle is not None:
            code = (lib.chorusCommAbort if abort else lib.chorusCommDestroy)(handle)
        if stream is not None:
            lib.chorusHostStreamDestroy(stream)  # after an abort its queued calls fail at once
        return code


class Comm(Collectives, PointToPoint, Windows):
    """A communicator. ``Comm(unique_id, size, rank, **settings)`` joins rank ``rank`` of ``size`` to the job the
    unique id names; ``Comm.from_env(**settings)`` reads rank, size and store from chorusrun, torchrun, mpirun or
    srun. Settings are chorusConfig_t's fields in snake_case (timeout_seconds=30, algo="ring", comm_name="grads").
    Use it as a context manager, or call close()."""

    def __init__(self, unique_id, size, rank, **settings):
        uid = as_unique_id(unique_id)
        config = make_config(settings)
        handle = ctypes.c_void_p()
        errors.check(lib.chorusCommInitRankConfig(ctypes.byref(handle), size, uid.struct(), rank,
                                                  config_pointer(config)))
        self._adopt(handle.value)

    @classmethod
    def from_env(cls, **settings):
        """The communicator of every rank a launcher started (chorusCommInitFromEnv)."""
        config = make_config(settings)
        handle = ctypes.c_void_p()
        errors.check(lib.chorusCommInitFromEnvConfig(ctypes.byref(handle), config_pointer(config)))
        return cls._wrap(handle.value)

    @classmethod
    def _wrap(cls, handle):
        if not handle:
            return None
        comm = cls.__new__(cls)
        comm._adopt(handle)
        return comm

    def _adopt(self, handle):
        self._native = _Native(handle)
        # A communicator that is never closed is destroyed when collected, or at exit.
        self._finalizer = weakref.finalize(self, self._native.end, False)
        value = ctypes.c_int()
        errors.check(lib.chorusCommUserRank(handle, ctypes.byref(value)))
        self._rank = value.value
        errors.check(lib.chorusCommCount(handle, ctypes.byref(value)))
        self._size = value.value

    @property
    def rank(self):
        return self._rank

    @property
    def size(self):
        return self._size

    @property
    def closed(self):
        return self._native.handle is None

    @property
    def handle(self):
        """The chorusComm_t as an int, for C code that takes one."""
        return self._live()

    def _live(self):
        handle = self._native.handle
        if handle is None:
            raise errors.ChorusError(errors.Result.INVALID_USAGE, "the communicator is closed")
        return handle

    def close(self):
        """Waits for the queued async_op calls, then destroys the communicator (chorusCommDestroy). Idempotent."""
        self._finalizer.detach()
        errors.check(self._native.end(False))

    def abort(self):
        """Makes every call blocked or queued on the communicator fail (chorusRemoteError) and frees it
        (chorusCommAbort). Safe from another thread."""
        self._finalizer.detach()
        errors.check(self._native.end(True))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        state = "closed" if self.closed else f"rank {self._rank} of {self._size}"
        return f"<chorus.Comm {state}>"

    def async_error(self):
        """The first error the communicator met (a lost peer, an abort), or Result.SUCCESS
        (chorusCommGetAsyncError)."""
        value = ctypes.c_int()
        errors.check(lib.chorusCommGetAsyncError(self._live(), ctypes.byref(value)))
        return errors.Result(value.value)

    def _submit(self, fn, args, buffers, result, async_op, stream):
        """Calls fn(*args, comm, stream): blocking; queued on the host stream with async_op (a Request); or, with
        device buffers, enqueued on their CUDA stream."""
        handle = self._native.handle
        if handle is None:
            self._live()  # raises
        device = False
        for b in buffers:
            device = device or b.device
        if device:
            if async_op:
                raise ValueError("async_op is for host buffers: a call on device buffers is already enqueued on "
                                 "its CUDA stream when it returns")
            errors.check(fn(*args, handle, stream_handle(stream)))
            return result
        if stream is not None:
            raise ValueError("stream= is the CUDA stream of device buffers; host calls are made non-blocking with "
                             "async_op=True")
        if not async_op:
            errors.check(fn(*args, handle, None))
            return result
        host_stream = self._native.stream()
        errors.check(fn(*args, handle, host_stream))
        request = Request(host_stream, buffers, result)
        if in_group():
            defer(request)
        else:
            request.record()
        return request

    def split(self, color, key=None, **settings):
        """chorusCommSplit, collective over this communicator: the ranks that pass one color form a new one, ranked
        by key (default: their rank here). color None: this rank joins none and gets None. Settings unset here
        take this communicator's."""
        child = ctypes.c_void_p()
        config = make_config(settings)
        errors.check(lib.chorusCommSplit(self._live(), SPLIT_NOCOLOR if color is None else color,
                                         self._rank if key is None else key, ctypes.byref(child),
                                         config_pointer(config)))
        return type(self)._wrap(child.value)

    def shrink(self, exclude=None, *, abort=False, **settings):
        """chorusCommShrink: a new communicator of the ranks that go on, in their order here; called by each of
        them. exclude: the ranks to leave out (the same list on every caller). abort=True: this communicator may
        have failed; its pending calls are aborted, and with no exclude list the callers agree on which ranks are
        gone. This communicator stays to be closed."""
        excluded = list(exclude or [])
        array = (ctypes.c_int * len(excluded))(*excluded) if excluded else None
        child = ctypes.c_void_p()
        config = make_config(settings)
        errors.check(lib.chorusCommShrink(self._live(), array, len(excluded), ctypes.byref(child),
                                          config_pointer(config), _SHRINK_ABORT if abort else _SHRINK_DEFAULT))
        return type(self)._wrap(child.value)

    def grow_id(self):
        """chorusCommGetUniqueId: on rank 0, the id to hand to the processes that join in grow()."""
        s = UniqueIdStruct()
        errors.check(lib.chorusCommGetUniqueId(self._live(), ctypes.byref(s)))
        return from_struct(s)

    def grow(self, new_ranks, unique_id=None, **settings):
        """chorusCommGrow, on every rank of this communicator: a new one of size + new_ranks ranks, this one's
        first. unique_id: rank 0's grow_id() (read on rank 0 only)."""
        uid = as_unique_id(unique_id).struct() if unique_id is not None else None
        child = ctypes.c_void_p()
        config = make_config(settings)
        errors.check(lib.chorusCommGrow(self._live(), new_ranks, ctypes.byref(uid) if uid is not None else None, -1,
                                        ctypes.byref(child), config_pointer(config)))
        return type(self)._wrap(child.value)

    @classmethod
    def join_grown(cls, unique_id, new_ranks, rank, **settings):
        """chorusCommGrow on a new process: joins as rank ``rank`` (the grown size's last new_ranks ranks)."""
        uid = as_unique_id(unique_id).struct()
        child = ctypes.c_void_p()
        config = make_config(settings)
        errors.check(lib.chorusCommGrow(None, new_ranks, ctypes.byref(uid), rank, ctypes.byref(child),
                                        config_pointer(config)))
        return cls._wrap(child.value)

    def register(self, buf):
        """chorusCommRegister: a Registration of buf's memory for this communicator's calls, until its close() (a
        context manager). No call may run on the communicator while it registers or deregisters."""
        return Registration(self, as_buffer(buf, False))


class Registration:
    """A registered buffer (chorusCommRegister); close() deregisters it."""

    def __init__(self, comm, buffer):
        handle = ctypes.c_void_p()
        errors.check(lib.chorusCommRegister(comm._live(), buffer.address, buffer.count * ITEMSIZE[buffer.dtype],
                                            ctypes.byref(handle)))
        self._comm = comm
        self._buffer = buffer
        self._handle = handle.value  # may be NULL where registering costs nothing
        self._registered = True

    def close(self):
        """chorusCommDeregister. Idempotent."""
        if self._registered:
            self._registered = False
            errors.check(lib.chorusCommDeregister(self._comm._live(), self._handle))
            self._buffer = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
