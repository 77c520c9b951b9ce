"""Chorus's datatypes (chorusDataType_t) and how each kind of buffer names them.

A datatype the library adds is one DataType member and one row of _ROWS: its numpy (or ml_dtypes) name, its array
interface type string and its DLPack type code."""

import enum


class DataType(enum.IntEnum):
    """chorusDataType_t."""
    INT8 = 0
    UINT8 = 1
    INT32 = 2
    UINT32 = 3
    INT64 = 4
    UINT64 = 5
    FLOAT16 = 6
    BFLOAT16 = 7
    FLOAT32 = 8
    FLOAT64 = 9
    FLOAT8E4M3 = 10
    FLOAT8E5M2 = 11


# DLPack's DLDataTypeCode values (kDLFloat8_e4m3fn, kDLFloat8_e5m2: DLPack 1.1).
_DL_INT, _DL_UINT, _DL_FLOAT, _DL_BFLOAT, _DL_FLOAT8_E4M3FN, _DL_FLOAT8_E5M2 = 0, 1, 2, 4, 10, 12

# datatype, numpy dtype name, array interface type string without its byte order ("" when numpy has no kind for it:
# ml_dtypes' types are "V2" or "V1", found by name), DLPack (code, bits), element size in bytes. numpy has no fp8:
# ml_dtypes' float8_e4m3fn and float8_e5m2 arrays are found by name, torch's float8 tensors by DLPack, and uint8 arrays
# holding fp8 bits reduce as fp8 when the call says dtype= (see retyped in buffers.py).
_ROWS = [
    (DataType.INT8, "int8", "i1", (_DL_INT, 8), 1),
    (DataType.UINT8, "uint8", "u1", (_DL_UINT, 8), 1),
    (DataType.INT32, "int32", "i4", (_DL_INT, 32), 4),
    (DataType.UINT32, "uint32", "u4", (_DL_UINT, 32), 4),
    (DataType.INT64, "int64", "i8", (_DL_INT, 64), 8),
    (DataType.UINT64, "uint64", "u8", (_DL_UINT, 64), 8),
    (DataType.FLOAT16, "float16", "f2", (_DL_FLOAT, 16), 2),
    (DataType.BFLOAT16, "bfloat16", "", (_DL_BFLOAT, 16), 2),
    (DataType.FLOAT32, "float32", "f4", (_DL_FLOAT, 32), 4),
    (DataType.FLOAT64, "float64", "f8", (_DL_FLOAT, 64), 8),
    (DataType.FLOAT8E4M3, "float8_e4m3fn", "", (_DL_FLOAT8_E4M3FN, 8), 1),
    (DataType.FLOAT8E5M2, "float8_e5m2", "", (_DL_FLOAT8_E5M2, 8), 1),
]

ITEMSIZE = {row[0]: row[4] for row in _ROWS}
NUMPY_NAME = {row[0]: row[1] for row in _ROWS}
_BY_NAME = {row[1]: row[0] for row in _ROWS}
_BY_DLPACK = {row[3]: row[0] for row in _ROWS}
# Little-endian ("<") and single-byte ("|") type strings; this library runs on little-endian machines only.
_BY_TYPESTR = {prefix + row[2]: row[0] for row in _ROWS if row[2] for prefix in ("<", "|")}
# struct-module format characters (the buffer protocol's), by kind; the size comes from the buffer's itemsize.
_FORMAT_KIND = {"b": "i", "h": "i", "i": "i", "l": "i", "q": "i", "n": "i", "B": "u", "H": "u", "I": "u", "L": "u",
                "Q": "u", "N": "u", "e": "f", "f": "f", "d": "f"}


def _unsupported(what):
    names = ", ".join(NUMPY_NAME[t] for t in DataType)
    return TypeError(f"chorus has no datatype for {what} (it has {names})")


def from_typestr(typestr, dtype=None):
    """The datatype of an array interface type string ("<f4"); dtype (the array's numpy dtype, when it has one)
    names the types numpy has no kind for, such as ml_dtypes' bfloat16."""
    t = _BY_TYPESTR.get(typestr)
    if t is None:
        t = _BY_NAME.get(getattr(dtype, "name", None))
        if t is None:
            raise _unsupported(f"dtype {dtype if dtype is not None else typestr}")
    return t


def from_dlpack(code, bits, lanes):
    t = _BY_DLPACK.get((code, bits)) if lanes == 1 else None
    if t is None:
        raise _unsupported(f"DLPack type code {code}, {bits} bits, {lanes} lanes")
    return t


def from_format(fmt, itemsize):
    """The datatype of a buffer protocol format ("f", "<q", "=B") and element size."""
    kind = _FORMAT_KIND.get(fmt.lstrip("@=<!"), "") if not fmt.startswith(">") else ""
    t = _BY_TYPESTR.get(f"<{kind}{itemsize}") if kind else None
    if t is None:
        raise _unsupported(f"buffer format {fmt!r}")
    return t


def as_datatype(dtype):
    """A DataType from a DataType, its value, its name ("float8e4m3", as chorusTypeName spells it) or a numpy-style
    name ("float8_e4m3fn")."""
    if isinstance(dtype, DataType):
        return dtype
    if isinstance(dtype, int):
        return DataType(dtype)
    name = str(getattr(dtype, "name", dtype)).lower()
    t = _BY_NAME.get(name) or DataType.__members__.get(name.upper())
    if t is None:
        raise _unsupported(f"dtype {dtype!r}")
    return t
