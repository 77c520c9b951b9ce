"""Chorus's errors as ChorusError: result code, its name, and the library's message."""

import numpy as np
import pytest

import chorus


def test_invalid_argument_names_the_call_and_leaves_the_comm_usable(comm):
    x = np.ones(2)
    with pytest.raises(chorus.ChorusError) as caught:
        comm.broadcast(x, root=comm.size + 3)
    e = caught.value
    assert e.code == chorus.Result.INVALID_ARGUMENT and e.code.name == "INVALID_ARGUMENT"
    assert e.name == "invalid argument"
    assert "chorusBroadcast" in e.message and f"root {comm.size + 3}" in e.message
    assert str(e).startswith("invalid argument: ") and "comm pytest" in str(e)
    comm.allreduce(x)
    assert x.tolist() == [float(comm.size)] * 2
    assert comm.async_error() == chorus.Result.SUCCESS


def test_bitwise_op_on_floats_is_refused_by_the_library(comm):
    with pytest.raises(chorus.ChorusError, match="integer types only") as caught:
        comm.allreduce(np.ones(2, np.float32), chorus.BAND)
    assert caught.value.code == chorus.Result.INVALID_ARGUMENT


def test_settings_reach_the_library(comm):
    # The last field of chorusConfig_t, out of its range: the library names it, so this struct's layout matches.
    with pytest.raises(chorus.ChorusError, match="deviceChunkSize") as caught:
        chorus.Comm.from_env(device_chunk_size=1)
    assert caught.value.code == chorus.Result.INVALID_ARGUMENT
    with pytest.raises(TypeError, match="unknown communicator setting 'timeout'"):
        chorus.Comm.from_env(timeout=3)
