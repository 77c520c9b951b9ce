"""What calls take as buffers: numpy arrays, buffer protocol objects, and the errors for what they cannot use."""

import array

import numpy as np
import pytest


def test_buffer_protocol_objects(comm):
    b = bytearray([comm.rank + 1] * 5)
    comm.allreduce(b, "max")
    assert list(b) == [comm.size] * 5
    a = array.array("d", [1.5] * 3)
    comm.allreduce(a)
    assert a.tolist() == [1.5 * comm.size] * 3
    m = memoryview(bytearray(8)).cast("q")
    m[0] = comm.rank
    comm.allreduce(m)
    assert m[0] == comm.size * (comm.size - 1) // 2
    got = comm.allgather(b"ab")  # read-only: fine to send
    assert got.tobytes() == b"ab" * comm.size


class _DLPackOnly:
    """A numpy array with only its DLPack face: what a tensor library hands over."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, stream=None):
        return self.array.__dlpack__()

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def test_dlpack_without_a_copy(comm):
    x = np.full((2, 3), comm.rank + 1, np.int64)
    comm.allreduce(_DLPackOnly(x))
    assert (x == comm.size * (comm.size + 1) // 2).all()
    got = comm.allgather(_DLPackOnly(np.full(2, comm.rank, np.float16)))
    assert got.dtype == np.float16 and got.tolist() == [[float(r)] * 2 for r in range(comm.size)]
    with pytest.raises(ValueError, match="contiguous"):
        comm.allreduce(_DLPackOnly(np.zeros((3, 3))[:, :2]))


def test_views_that_are_contiguous(comm):
    m = np.zeros((4, 3), np.float32)
    row = m[1]  # a contiguous view: reduced in place, into m
    row += 1
    comm.allreduce(row)
    assert m[1].tolist() == [float(comm.size)] * 3 and m[0].tolist() == [0.0] * 3
    column = np.ones((3, 1), np.float32)[:, :1]  # strides of extent-1 dimensions do not matter
    comm.allreduce(column)


def test_refused_buffers(comm):
    with pytest.raises(ValueError, match="contiguous"):
        comm.allreduce(np.zeros((4, 4))[:, 1])
    frozen = np.zeros(3)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        comm.allreduce(frozen)
    with pytest.raises(ValueError, match="writable"):
        comm.allreduce(b"abc")
    with pytest.raises(ValueError, match="contiguous"):
        comm.allreduce(memoryview(bytearray(8))[::2])
    with pytest.raises(TypeError, match="int16"):
        comm.allreduce(np.zeros(3, np.int16))
    with pytest.raises(TypeError, match="format 'h'"):
        comm.allreduce(array.array("h", [1]))
    with pytest.raises(TypeError, match="complex128"):
        comm.allreduce(np.zeros(3, np.complex128))
    with pytest.raises(TypeError, match="not list"):
        comm.allreduce([1.0, 2.0])
    with pytest.raises(ValueError, match="8 elements of float32, not 8 of float64"):
        comm.allreduce(np.zeros(8, np.float32), out=np.zeros(8))
    with pytest.raises(ValueError, match="unknown reduction op 'median'"):
        comm.allreduce(np.zeros(1), "median")
    comm.barrier()  # nothing above reached the library: the ranks are still in step
