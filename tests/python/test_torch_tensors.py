"""torch tensors through DLPack: CPU tensors are used in place, without a copy. Only in the 1-rank world: importing
torch takes seconds of CPU per process, and DLPack across ranks is tested on numpy's (test_buffers.py)."""

import pytest


@pytest.fixture
def torch(comm):
    if comm.size != 1:
        pytest.skip("torch runs in the 1-rank world")
    return pytest.importorskip("torch")


DTYPES = ("float32", "bfloat16", "float16", "float64", "int8", "uint8", "int32", "int64")


def test_tensors_in_place(comm, torch):
    for name in DTYPES:
        dtype = getattr(torch, name)
        t = torch.full((3, 4), comm.rank + 1, dtype=dtype)
        address = t.data_ptr()
        assert comm.allreduce(t) is t and t.data_ptr() == address
        assert torch.equal(t, torch.full((3, 4), comm.size * (comm.size + 1) // 2, dtype=dtype)), dtype
        # Out of place, the library copies: the values reach out through DLPack's addresses.
        source = torch.arange(12, dtype=dtype).reshape(3, 4)
        out = torch.zeros(3, 4, dtype=dtype)
        assert comm.broadcast(source, out=out) is out and torch.equal(out, source), dtype


def test_tensor_results_are_tensors(comm, torch):
    got = comm.allgather(torch.arange(3, dtype=torch.int32) + comm.rank)
    assert isinstance(got, torch.Tensor) and got.shape == (comm.size, 3)
    assert got[:, 0].tolist() == list(range(comm.size))
    out = torch.empty(2, dtype=torch.float32)
    comm.reduce_scatter(torch.ones(2 * comm.size), "sum", out=out)
    assert out.tolist() == [float(comm.size)] * 2
    matrix = torch.zeros(4, 4)
    view = matrix[1]  # a contiguous view (DLPack's byte offset), reduced into its matrix
    comm.allreduce(view + 1, out=view)
    assert matrix.sum(dim=1).tolist() == [0.0, 4.0 * comm.size, 0.0, 0.0]


def test_refused_tensors(comm, torch):
    with pytest.raises(ValueError, match="contiguous"):
        comm.allreduce(torch.zeros(4, 4).t())
    with pytest.raises(TypeError, match="DLPack type code"):
        comm.allreduce(torch.zeros(2, dtype=torch.int16))
