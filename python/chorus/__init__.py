"""Chorus from Python: communicators, collectives, send and receive, groups, split and shrink over libchorus.so's C
ABI (ctypes; no compiler, no torch). Buffers are numpy arrays, DLPack tensors or buffer protocol objects, used in
place. docs/python.md describes it."""

from ._lib import version as _version
from .comm import Comm, Registration
from .dtypes import DataType
from .errors import ChorusError, Result
from .groups import group
from .ops import ReduceOp
from .request import Request, wait_all
from .unique_id import UniqueId, get_unique_id
from .windows import SharedMemory, Window

SUM, PROD, MAX, MIN, AVG, BAND, BOR, BXOR = (ReduceOp.SUM, ReduceOp.PROD, ReduceOp.MAX, ReduceOp.MIN, ReduceOp.AVG,
                                             ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR)


def library_version():
    """libchorus.so's version code: MAJOR * 10000 + MINOR * 100 + PATCH."""
    return _version()


__all__ = ["Comm", "Registration", "DataType", "ChorusError", "Result", "group", "ReduceOp", "Request", "wait_all",
           "UniqueId", "get_unique_id", "Window", "SharedMemory", "library_version", "SUM", "PROD", "MAX", "MIN", "AVG", "BAND", "BOR", "BXOR"]
