"""The buffer protocol through CPython's own PyObject_GetBuffer, which gives the address of read-only buffers too
(ctypes' from_buffer takes writable ones only). The export is held, so the object cannot resize, until release."""

import ctypes

_SIMPLE, _WRITABLE, _FORMAT, _C_CONTIGUOUS = 0, 0x0001, 0x0004, 0x0038


class _PyBuffer(ctypes.Structure):
    _fields_ = [("buf", ctypes.c_void_p), ("obj", ctypes.c_void_p), ("len", ctypes.c_ssize_t),
                ("itemsize", ctypes.c_ssize_t), ("readonly", ctypes.c_int), ("ndim", ctypes.c_int),
                ("format", ctypes.c_char_p), ("shape", ctypes.POINTER(ctypes.c_ssize_t)),
                ("strides", ctypes.POINTER(ctypes.c_ssize_t)), ("suboffsets", ctypes.c_void_p),
                ("internal", ctypes.c_void_p)]


_get = ctypes.pythonapi.PyObject_GetBuffer
_get.argtypes = [ctypes.py_object, ctypes.POINTER(_PyBuffer), ctypes.c_int]
_get.restype = ctypes.c_int
_release = ctypes.pythonapi.PyBuffer_Release
_release.argtypes = [ctypes.POINTER(_PyBuffer)]
_release.restype = None


class HeldBuffer:
    """A C-contiguous export of obj's buffer (writable when asked); raises BufferError when obj cannot give one."""
    __slots__ = ("_view", "address", "nbytes", "itemsize", "format", "shape")

    def __init__(self, obj, writable):
        self._view = None
        view = _PyBuffer()
        _get(obj, ctypes.byref(view), _C_CONTIGUOUS | _FORMAT | (_WRITABLE if writable else _SIMPLE))
        self._view = view
        self.address = view.buf or 0
        self.nbytes = view.len
        self.itemsize = view.itemsize
        self.format = (view.format or b"B").decode()
        self.shape = tuple(view.shape[i] for i in range(view.ndim)) if view.shape else (view.len // view.itemsize,)

    def release(self):
        if self._view is not None:
            _release(ctypes.byref(self._view))
            self._view = None

    def __del__(self):
        self.release()
