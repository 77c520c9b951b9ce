"""What the perf/torch benchmarks share: N spawned ranks, each in a chorus world and a gloo group over the same
ranks, so that one run can alternate the two backends; rank 0 hands its result back."""

import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "build", "python"))  # the build tree's chorus_torch, if any

import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402


def join_both(rank, n, init_file):
    """Joins the chorus world (the default group) and a gloo group of the same ranks: {"chorus": ..., "gloo": ...}."""
    import chorus_torch  # noqa: F401  (registers the backend)
    dist.init_process_group("chorus", init_method="file://" + init_file, rank=rank, world_size=n)
    return {"chorus": dist.group.WORLD, "gloo": dist.new_group(list(range(n)), backend="gloo")}


def spawn(rank_main, args, nranks):
    """Runs rank_main(rank, args, init_file, results) on nranks spawned processes; returns what rank 0 put."""
    ctx = mp.get_context("spawn")
    results = ctx.SimpleQueue()
    with tempfile.TemporaryDirectory() as tmp:
        mp.start_processes(rank_main, args=(args, os.path.join(tmp, "init"), results), nprocs=nranks,
                           start_method="spawn")
    return results.get()
