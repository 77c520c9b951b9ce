"""``with chorus.group():`` over chorusGroupStart and chorusGroupEnd: the calls made inside are recorded and run
together when the outermost group ends, so any pattern of sends and receives completes."""

import threading

from . import errors
from ._lib import lib

# Groups are per thread in the library, and so is what Python tracks of them: the depth, and the requests made
# inside, whose events are recorded once the calls are queued (at the outermost end).
_state = threading.local()


def in_group():
    return getattr(_state, "depth", 0) > 0


def defer(request):
    _state.requests.append(request)


class group:
    """Context manager: calls inside run at the end of the outermost group. A call's out array is written, and an
    async_op call's Request can be waited for, only after that end. An exception inside drops the whole group's
    calls (none of them runs) and goes on."""

    def __enter__(self):
        errors.check(lib.chorusGroupStart())
        depth = getattr(_state, "depth", 0)
        if depth == 0:
            _state.requests = []
        _state.depth = depth + 1
        return self

    def __exit__(self, kind, value, traceback):
        if kind is not None:
            # A call that fails its argument checks inside a group makes the library drop the group at its end; a
            # barrier on no communicator is such a call.
            lib.chorusBarrier(None, None)
        code = lib.chorusGroupEnd()
        error = errors.last_error(code) if code else None
        if kind is not None:
            error = errors.ChorusError(errors.Result.INVALID_USAGE,
                                       f"the group was dropped: {kind.__name__} raised inside it")
        _state.depth -= 1
        if _state.depth > 0:
            if error is not None and kind is None:
                raise error
            return False
        requests, _state.requests = _state.requests, []
        for r in requests:
            if error is None:
                r.record()
            else:
                r.fail(error)
        if error is not None and kind is None:
            raise error
        return False
