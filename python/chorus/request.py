"""Non-blocking calls: a host call made with async_op=True is queued on its communicator's host stream
(chorusHostStreamCreate), and the Request holds an event recorded right after it (chorusEventRecord), with the
buffers the call uses, until the call is done."""

import ctypes

from . import errors
from ._lib import lib


class Later:
    """A result known only once the call is done (recv_any's sender); it holds what the library writes into."""
    __slots__ = ("get",)

    def __init__(self, get):
        self.get = get


class Request:
    """A queued call. ``wait()`` blocks until it is done and returns its result (the output array, or the sender of
    recv_any); ``test()`` says whether it is done. Both raise the call's ChorusError when it failed. Dropping an
    unfinished Request waits for it, so that its buffers outlive the call."""
    __slots__ = ("_event", "_stream", "_hold", "_result", "_error", "_recorded", "__weakref__")

    def __init__(self, stream, hold, result):
        event = ctypes.c_void_p()
        errors.check(lib.chorusEventCreate(ctypes.byref(event)))
        self._event = event.value
        self._stream = stream
        self._hold = hold
        self._result = result
        self._error = None
        self._recorded = False

    def record(self):
        """Marks the calls queued on the stream so far; inside a group, done when the group ends (groups.py)."""
        errors.check(lib.chorusEventRecord(self._event, self._stream))
        self._recorded = True

    def fail(self, error):
        """The call never ran (its group failed)."""
        self._finish_with(error)

    def _finish_with(self, error):
        if self._event is not None:
            lib.chorusEventDestroy(self._event)
            self._event = None
        self._hold = None
        self._error = error

    def _conclude(self, code):
        self._finish_with(errors.last_error(code) if code else None)

    def _outcome(self):
        if self._error is not None:
            raise self._error
        result = self._result
        return result.get() if isinstance(result, Later) else result

    def _check_recorded(self):
        if not self._recorded:
            raise errors.ChorusError(errors.Result.INVALID_USAGE,
                                     "waited for inside its group: a group's calls run when the group ends")

    def wait(self):
        """Blocks until the call is done; returns its result or raises its error."""
        if self._event is not None:
            self._check_recorded()
            self._conclude(lib.chorusEventSynchronize(self._event))
        return self._outcome()

    def test(self):
        """True once the call is done (raising its error if it failed), False before."""
        if self._event is not None:
            self._check_recorded()
            code = lib.chorusEventQuery(self._event)
            if code == errors.Result.IN_PROGRESS:
                return False
            self._conclude(code)
        self._outcome()
        return True

    def __del__(self):
        if self._event is not None:
            if self._recorded:
                lib.chorusEventSynchronize(self._event)
            lib.chorusEventDestroy(self._event)


def wait_all(requests):
    """Waits for every request; returns their results in order (raises the first error, after waiting for all)."""
    first_error = None
    results = []
    for r in requests:
        try:
            results.append(r.wait())
        except errors.ChorusError as e:
            results.append(None)
            first_error = first_error or e
    if first_error is not None:
        raise first_error
    return results
