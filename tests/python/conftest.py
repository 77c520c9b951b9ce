"""The job's communicator for every test: each rank of a chorusrun world runs this whole suite, test by test in the
same order, so the tests' collectives meet (tests/CMakeLists.txt starts the worlds)."""

import pytest

import chorus


@pytest.fixture(scope="session")
def comm():
    # A test that fails on one rank only leaves the others waiting in its next collective: 30 s, not 300.
    with chorus.Comm.from_env(timeout_seconds=30, comm_name="pytest") as c:
        yield c
