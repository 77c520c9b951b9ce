"""libchorus.so through ctypes: where it is found, and the prototypes of include/chorus/chorus.h.

ctypes releases the GIL around every call, so a blocking collective lets other Python threads run (and one of them
may call Comm.abort)."""

import ctypes
import os
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
# Installed, the package is PREFIX/lib/python3/dist-packages/chorus and the library PREFIX/lib; in a build tree the
# package is BUILD/python/chorus and the library BUILD.
_PLACES = (_PACKAGE.parents[2], _PACKAGE.parents[1])
_NAMES = ("libchorus.so.0", "libchorus.so")


def _load():
    explicit = os.environ.get("CHORUS_LIBRARY")
    if explicit:
        return ctypes.CDLL(explicit)
    for place in _PLACES:
        for name in _NAMES:
            if (place / name).exists():
                return ctypes.CDLL(str(place / name))
    return ctypes.CDLL(_NAMES[0])  # the dynamic loader's own search (LD_LIBRARY_PATH, ld.so.cache)


lib = _load()


class UniqueIdStruct(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_char * 128)]


_result = ctypes.c_int
_ptr = ctypes.c_void_p
_int = ctypes.c_int
_size = ctypes.c_size_t
_p_int = ctypes.POINTER(ctypes.c_int)
_p_ptr = ctypes.POINTER(ctypes.c_void_p)
_p_size = ctypes.POINTER(ctypes.c_size_t)

# name: (restype, argtypes); a communicator, stream, event or config is a plain pointer here.
_PROTOTYPES = {
    "chorusGetVersion": (_result, [_p_int]),
    "chorusGetUniqueId": (_result, [ctypes.POINTER(UniqueIdStruct)]),
    "chorusCommInitRankConfig": (_result, [_p_ptr, _int, UniqueIdStruct, _int, _ptr]),
    "chorusCommInitFromEnvConfig": (_result, [_p_ptr, _ptr]),
    "chorusCommDestroy": (_result, [_ptr]),
    "chorusCommAbort": (_result, [_ptr]),
    "chorusCommRegister": (_result, [_ptr, _ptr, _size, _p_ptr]),
    "chorusCommDeregister": (_result, [_ptr, _ptr]),
    "chorusCommCount": (_result, [_ptr, _p_int]),
    "chorusCommUserRank": (_result, [_ptr, _p_int]),
    "chorusCommGetAsyncError": (_result, [_ptr, _p_int]),
    "chorusGetErrorString": (ctypes.c_char_p, [_int]),
    "chorusGetLastError": (ctypes.c_char_p, [_ptr]),
    "chorusAllReduce": (_result, [_ptr, _ptr, _size, _int, _int, _ptr, _ptr]),
    "chorusBroadcast": (_result, [_ptr, _ptr, _size, _int, _int, _ptr, _ptr]),
    "chorusReduce": (_result, [_ptr, _ptr, _size, _int, _int, _int, _ptr, _ptr]),
    "chorusAllGather": (_result, [_ptr, _ptr, _size, _int, _ptr, _ptr]),
    "chorusReduceScatter": (_result, [_ptr, _ptr, _size, _int, _int, _ptr, _ptr]),
    "chorusSend": (_result, [_ptr, _size, _int, _int, _ptr, _ptr]),
    "chorusRecv": (_result, [_ptr, _size, _int, _int, _ptr, _ptr]),
    "chorusRecvAny": (_result, [_ptr, _size, _int, _p_int, _ptr, _ptr]),
    "chorusGroupStart": (_result, []),
    "chorusGroupEnd": (_result, []),
    "chorusAllToAll": (_result, [_ptr, _ptr, _size, _int, _ptr, _ptr]),
    "chorusAllToAllv": (_result, [_ptr, _p_size, _p_size, _ptr, _p_size, _p_size, _int, _ptr, _ptr]),
    "chorusGather": (_result, [_ptr, _ptr, _size, _int, _int, _ptr, _ptr]),
    "chorusScatter": (_result, [_ptr, _ptr, _size, _int, _int, _ptr, _ptr]),
    "chorusBarrier": (_result, [_ptr, _ptr]),
    "chorusCommSplit": (_result, [_ptr, _int, _int, _p_ptr, _ptr]),
    "chorusCommShrink": (_result, [_ptr, _p_int, _int, _p_ptr, _ptr, _int]),
    "chorusCommGetUniqueId": (_result, [_ptr, ctypes.POINTER(UniqueIdStruct)]),
    "chorusCommGrow": (_result, [_ptr, _int, ctypes.POINTER(UniqueIdStruct), _int, _p_ptr, _ptr]),
    "chorusHostStreamCreate": (_result, [_p_ptr]),
    "chorusHostStreamDestroy": (_result, [_ptr]),
    "chorusStreamSynchronize": (_result, [_ptr]),
    "chorusStreamQuery": (_result, [_ptr]),
    "chorusEventCreate": (_result, [_p_ptr]),
    "chorusEventRecord": (_result, [_ptr, _ptr]),
    "chorusEventQuery": (_result, [_ptr]),
    "chorusEventSynchronize": (_result, [_ptr]),
    "chorusEventDestroy": (_result, [_ptr]),
    "chorusCommWindowRegister": (_result, [_ptr, _ptr, _size, _p_ptr, _int]),
    "chorusCommWindowDeregister": (_result, [_ptr, _ptr]),
    "chorusPutSignal": (_result, [_ptr, _size, _int, _int, _ptr, _size, _int, _int, ctypes.c_uint, _ptr, _ptr]),
    "chorusSignal": (_result, [_int, _int, _int, ctypes.c_uint, _ptr, _ptr]),
    "chorusWaitSignal": (_result, [_int, _ptr, _ptr, _ptr]),
    "chorusWindowFlush": (_result, [_ptr, _ptr]),
    "chorusMemAlloc": (_result, [_p_ptr, _size]),
    "chorusMemFree": (_result, [_ptr]),
    "chorusTypeSize": (_size, [_int]),
    "chorusTypeName": (ctypes.c_char_p, [_int]),
    "chorusOpName": (ctypes.c_char_p, [_int]),
}

for _name, (_restype, _argtypes) in _PROTOTYPES.items():
    _fn = getattr(lib, _name)
    _fn.restype = _restype
    _fn.argtypes = _argtypes


def version():
    """The library's version code: MAJOR * 10000 + MINOR * 100 + PATCH."""
    v = ctypes.c_int()
    lib.chorusGetVersion(ctypes.byref(v))
    return v.value
