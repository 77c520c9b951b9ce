"""Reading a DLPack capsule (``obj.__dlpack__()``) without taking it: the capsule keeps the producer's memory alive
for as long as it is held, and frees its DLManagedTensor when collected (its name stays "dltensor")."""

import ctypes

# DLDeviceType values.
CPU = 1
CUDA = 2
CUDA_HOST = 3  # pinned host memory: host memory to Chorus
ROCM_HOST = 11
CUDA_MANAGED = 13
HOST_DEVICES = (CPU, CUDA_HOST, ROCM_HOST)
CUDA_DEVICES = (CUDA, CUDA_MANAGED)


class _Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _Device), ("ndim", ctypes.c_int32), ("dtype", _DataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class _ManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _Tensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


class View:
    """What a DLPack capsule describes: address, device type, shape, strides (None: row-major), (code, bits,
    lanes)."""
    __slots__ = ("address", "device_type", "shape", "strides", "dtype")

    def __init__(self, capsule):
        t = _ManagedTensor.from_address(_get_pointer(capsule, b"dltensor")).dl_tensor
        self.address = (t.data or 0) + t.byte_offset
        self.device_type = t.device.device_type
        self.shape = tuple(t.shape[i] for i in range(t.ndim))
        self.strides = tuple(t.strides[i] for i in range(t.ndim)) if t.strides else None
        self.dtype = (t.dtype.code, t.dtype.bits, t.dtype.lanes)
