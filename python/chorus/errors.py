"""Chorus's result codes as Python exceptions: every call that does not return chorusSuccess raises ChorusError."""

import enum

from ._lib import lib


class Result(enum.IntEnum):
    """chorusResult_t."""
    SUCCESS = 0
    UNHANDLED_CUDA_ERROR = 1
    SYSTEM_ERROR = 2
    INTERNAL_ERROR = 3
    INVALID_ARGUMENT = 4
    INVALID_USAGE = 5
    REMOTE_ERROR = 6
    IN_PROGRESS = 7
    TIMEOUT = 8


class ChorusError(RuntimeError):
    """A Chorus call failed. ``code`` is its result (a Result, or the plain int of a code this module does not know),
    ``name`` the library's name for it ("invalid argument"), ``message`` what the library said happened."""

    def __init__(self, code, message):
        try:
            self.code = Result(code)
        except ValueError:
            self.code = code
        self.name = lib.chorusGetErrorString(code).decode()
        self.message = message
        super().__init__(f"{self.name}: {message}" if message else self.name)


def last_error(code):
    """The ChorusError for a result just returned on this thread: the library keeps the message per thread
    (chorusGetLastError(NULL)), so it is read before any other call on this thread."""
    return ChorusError(code, lib.chorusGetLastError(None).decode(errors="replace"))


def check(code):
    """Raises the ChorusError for a result that is not chorusSuccess."""
    if code:
        raise last_error(code)
