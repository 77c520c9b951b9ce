"""The flight recorder through torch: a timed-out chorus Work leaves the record behind in CHORUS_FLIGHT_DIR, and
chorus_torch hands the record to Python (flight_record) and writes it where told (dump_flight_record)."""

import datetime
import functools
import json
import os
import tempfile
import time

import pytest
import torch
import torch.distributed as dist

from world import run_world


def _dump_file(folder, rank):
    names = [n for n in os.listdir(folder) if n.endswith("-rank%d.json" % rank)]
    return os.path.join(folder, names[0]) if names else None


def _rank_times_out(rank, n, folder):
    import chorus_torch
    # The world was made with CHORUS_FLIGHT_DIR set (run_world's env); the subgroup, split from it, inherits it.
    group = dist.new_group([0, 1], timeout=datetime.timedelta(seconds=2))
    x = torch.ones(4)
    dist.all_reduce(x, group=group)
    if rank == 0:
        with pytest.raises(RuntimeError, match="Timed out"):
            dist.all_reduce(x, group=group)  # rank 1 never makes this call
        path = _dump_file(folder, 0)
        assert path is not None, os.listdir(folder)
        with open(path) as f:
            record = json.load(f)
        assert record["calls"][-1]["op"] == "allreduce" and record["calls"][-1]["state"] == "failed", record
    else:
        deadline = time.monotonic() + 30
        while _dump_file(folder, 0) is None:  # polls for rank 0's file, within a deadline
            assert time.monotonic() < deadline, "rank 0 left no flight record"
            time.sleep(0.05)
        record = chorus_torch.flight_record(group)
        assert record["rank"] == 1 and record["size"] == 2, record
        assert [c["state"] for c in record["calls"]][-1] == "done", record
        mine = os.path.join(folder, "mine.json")
        chorus_torch.dump_flight_record(group, mine)
        with open(mine) as f:
            assert json.load(f)["calls"] == record["calls"]


def test_a_timed_out_work_leaves_its_flight_record():
    with tempfile.TemporaryDirectory() as folder:
        run_world(functools.partial(_rank_times_out, folder=folder), 2, deadline=90,
                  env={"CHORUS_FLIGHT_DIR": folder})
