"""Unique ids: one rank makes one (chorusGetUniqueId starts a rendezvous store in that process), sends its 128
bytes to the others however it likes, and every rank passes it to Comm(unique_id, size, rank)."""

import ctypes

from . import errors
from ._lib import UniqueIdStruct, lib

SIZE = ctypes.sizeof(UniqueIdStruct)


class UniqueId:
    """128 opaque bytes: ``bytes(uid)`` to send, ``UniqueId(data)`` on the other side; picklable. They hold the
    store's address and the job's secret: send them only to the job's ranks."""
    __slots__ = ("_data",)

    def __init__(self, data):
        data = bytes(data)
        if len(data) != SIZE:
            raise ValueError(f"a unique id has {SIZE} bytes, not {len(data)}")
        self._data = data

    def __bytes__(self):
        return self._data

    def __eq__(self, other):
        return isinstance(other, UniqueId) and other._data == self._data

    def __hash__(self):
        return hash(self._data)

    def __reduce__(self):
        return (UniqueId, (self._data,))

    def __repr__(self):
        return "UniqueId(<128 bytes>)"  # it carries the job's secret: not for logs

    def struct(self):
        return UniqueIdStruct.from_buffer_copy(self._data)


def from_struct(s):
    return UniqueId(ctypes.string_at(ctypes.addressof(s), SIZE))


def get_unique_id():
    """A new unique id, with its rendezvous store served by this process for as long as it lives."""
    s = UniqueIdStruct()
    errors.check(lib.chorusGetUniqueId(ctypes.byref(s)))
    return from_struct(s)


def as_unique_id(value):
    return value if isinstance(value, UniqueId) else UniqueId(value)
