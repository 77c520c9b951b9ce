"""What a call's arguments point at: address, element count and datatype of a numpy array (array interface), of a
DLPack tensor (torch, cupy, jax...) or of any buffer protocol object (bytearray, array.array, memoryview), without a
copy. Buffers must be contiguous: the library takes one address and a count."""

import ctypes
import math
import sys

from . import _dlpack, dtypes
from ._pybuffer import HeldBuffer


class Buffer:
    """obj: what the caller passed; address, count (elements), dtype (a DataType), shape; device: True for CUDA
    memory; hold: what must live as long as the call (a DLPack capsule, a buffer export)."""
    __slots__ = ("obj", "address", "count", "dtype", "shape", "device", "hold")

    def __init__(self, obj, address, count, dtype, shape, device=False, hold=None):
        self.obj = obj
        self.address = address
        self.count = count
        self.dtype = dtype
        self.shape = shape
        self.device = device
        self.hold = hold


def _row_major(shape, strides, itemsize):
    """True when strides (in bytes) are the row-major ones of shape; dimensions of extent 1 may have any stride."""
    step = itemsize
    for extent, stride in zip(reversed(shape), reversed(strides)):
        if extent != 1 and stride != step:
            return False
        step *= extent
    return True


def _not_contiguous(obj):
    return ValueError(f"chorus needs contiguous buffers, and this {type(obj).__name__} is not: pass a contiguous copy "
                      "(numpy.ascontiguousarray, tensor.contiguous()) and copy the result back")


# numpy arrays take a shorter way, as most calls' buffers are: their types and dtypes, as they are met.
_NUMPY_TYPES = set()
_NUMPY_DTYPES = {}
_address_of = ctypes.addressof
_char = ctypes.c_char


def as_buffer(obj, writable, stream=None):
    """The Buffer behind obj. writable: the call writes into it (read-only arrays are refused). stream: the CUDA
    stream the call will run on, handed to a DLPack producer of device memory so that it orders its work first."""
    if type(obj) in _NUMPY_TYPES:
        dtype = _NUMPY_DTYPES.get(obj.dtype)
        if dtype is not None:
            # A ctypes view takes writable C-contiguous buffers only, and gives their address in a third of the
            # array interface's time; the others (read-only, strided, empty) go the long way, which says why.
            try:
                address = _address_of(_char.from_buffer(obj))
            except (TypeError, ValueError):
                pass
            else:
                return Buffer(obj, address, obj.size, dtype, obj.shape)
    try:
        face = obj.__array_interface__
    except AttributeError:
        return _from_dlpack(obj, stream) if hasattr(obj, "__dlpack__") else _from_buffer_protocol(obj, writable)
    address, readonly = face["data"]
    if writable and readonly:
        raise ValueError(f"the call writes into this {type(obj).__name__}, which is read-only")
    dtype = dtypes.from_typestr(face["typestr"], getattr(obj, "dtype", None))
    shape = face["shape"]
    strides = face.get("strides")
    if strides is not None and not _row_major(shape, strides, dtypes.ITEMSIZE[dtype]):
        raise _not_contiguous(obj)
    _remember_numpy(obj, dtype)
    return Buffer(obj, address, math.prod(shape), dtype, shape)


def _remember_numpy(obj, dtype):
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(obj, numpy.ndarray) and obj.dtype.isnative:
        _NUMPY_TYPES.add(type(obj))
        _NUMPY_DTYPES[obj.dtype] = dtype


def stream_handle(stream):
    """A CUDA stream as an int: an int already, or an object with __cuda_stream__ (the CUDA stream protocol),
    cuda_stream (torch) or ptr (cupy)."""
    if stream is None or isinstance(stream, int):
        return stream
    if hasattr(stream, "__cuda_stream__"):
        return stream.__cuda_stream__()[1]
    for name in ("cuda_stream", "ptr"):
        if hasattr(stream, name):
            return int(getattr(stream, name))
    raise TypeError(f"not a CUDA stream: {type(stream).__name__}")


def _from_dlpack(obj, stream):
    device_type = obj.__dlpack_device__()[0]
    if device_type in _dlpack.CUDA_DEVICES:
        # DLPack's stream numbers: 1 is CUDA's legacy default stream (a NULL stream here); 0 is not allowed.
        capsule = obj.__dlpack__(stream=stream_handle(stream) or 1)
    elif device_type in _dlpack.HOST_DEVICES:
        capsule = obj.__dlpack__()
    else:
        raise TypeError(f"chorus takes host memory and CUDA memory, not DLPack device type {device_type}")
    view = _dlpack.View(capsule)
    dtype = dtypes.from_dlpack(*view.dtype)
    # DLPack strides count elements, not bytes.
    if view.strides is not None and not _row_major(view.shape, view.strides, 1):
        raise _not_contiguous(obj)
    return Buffer(obj, view.address, math.prod(view.shape), dtype, view.shape, device_type in _dlpack.CUDA_DEVICES,
                  capsule)


def _from_buffer_protocol(obj, writable):
    try:
        held = HeldBuffer(obj, writable)
    except BufferError as e:
        raise ValueError(f"chorus cannot use this {type(obj).__name__} as a {'writable ' if writable else ''}"
                         f"contiguous buffer: {e}") from None
    except TypeError:
        raise TypeError(f"chorus takes numpy arrays, DLPack tensors and buffer protocol objects, not "
                        f"{type(obj).__name__}") from None
    dtype = dtypes.from_format(held.format, held.itemsize)
    return Buffer(obj, held.address, held.nbytes // held.itemsize, dtype, held.shape, hold=held)


def retyped(call, buf, dtype):
    """buf read as dtype (None: as it is): a uint8 or int8 buffer holding another one-byte type's bits, such as fp8,
    which numpy lacks."""
    if dtype is None:
        return buf
    t = dtypes.as_datatype(dtype)
    if t == buf.dtype:
        return buf
    if dtypes.ITEMSIZE[buf.dtype] != 1 or dtypes.ITEMSIZE[t] != 1:
        raise ValueError(f"{call}: dtype={t.name.lower()} reinterprets one-byte buffers only, not "
                         f"{dtypes.NUMPY_NAME[buf.dtype]}")
    return Buffer(buf.obj, buf.address, buf.count, t, buf.shape, buf.device, buf.hold)


def check_same(call, what, a, b):
    """Refuses b unless it has a's datatype and element count (the library trusts the counts it is given)."""
    if a.dtype != b.dtype or a.count != b.count:
        raise ValueError(f"{call}: {what} must have {a.count} elements of {dtypes.NUMPY_NAME[a.dtype]}, not "
                         f"{b.count} of {dtypes.NUMPY_NAME[b.dtype]}")


def check_count(call, what, b, dtype, count):
    if b.dtype != dtype or b.count != count:
        raise ValueError(f"{call}: {what} must have {count} elements of {dtypes.NUMPY_NAME[dtype]}, not "
                         f"{b.count} of {dtypes.NUMPY_NAME[b.dtype]}")


def new_like(buf, shape):
    """A new array of buf's datatype and this shape, of buf's kind where it can: a numpy array for numpy arrays and
    other host buffers, ``new_empty`` for tensors that have it (torch's; on their device)."""
    make = getattr(buf.obj, "new_empty", None)
    if make is not None:
        return make(shape)
    import numpy
    dtype = getattr(buf.obj, "dtype", None) if hasattr(buf.obj, "__array_interface__") else None
    return numpy.empty(shape, dtype=dtype if dtype is not None else dtypes.NUMPY_NAME[buf.dtype])
