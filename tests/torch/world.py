"""Runs a function on N processes that each join one torch.distributed group, with a deadline: every rank's
exception is reported, and no process outlives the test.

Ranks start from a fork server that imported torch and chorus_torch once (it lives as long as the test session
and leaves with it): a process spawned afresh would import torch again, seconds of CPU per rank."""

import os
import tempfile
import time
import traceback

import torch.multiprocessing as mp


def _rank_main(rank, fn, n, init_file, backend, errors, env):
    import torch.distributed as dist
    os.environ.update(env)  # before the group is made: the communicator reads its settings at init
    try:
        import chorus_torch  # noqa: F401  (registers "chorus", also for subgroups of other backends' worlds)
        dist.init_process_group(backend, init_method="file://" + init_file, rank=rank, world_size=n)
        fn(rank, n)
        dist.destroy_process_group()
    except BaseException:  # report everything, KeyboardInterrupt included
        errors.put((rank, traceback.format_exc()))
        raise


_START = "forkserver"


def run_world(fn, n, backend="chorus", deadline=120, env=None):
    """fn(rank, world_size) runs on every rank, with `env` added to each rank's environment; raises AssertionError
    naming each failed rank."""
    ctx = mp.get_context(_START)
    ctx.set_forkserver_preload(["torch", "torch.distributed", "chorus_torch"])
    errors = ctx.SimpleQueue()
    with tempfile.TemporaryDirectory() as tmp:
        init_file = os.path.join(tmp, "init")
        context = mp.start_processes(_rank_main, args=(fn, n, init_file, backend, errors, dict(env or {})), nprocs=n, join=False,
                                     start_method=_START)
        end = time.monotonic() + deadline
        timed_out = False
        try:
            while not context.join(timeout=max(0.1, end - time.monotonic())):
                if time.monotonic() > end:
                    timed_out = True
                    break
        except (mp.ProcessRaisedException, mp.ProcessExitedException):
            pass  # a rank failed: its traceback is in `errors`; the others are stopped below
        finally:
            alive = [i for i, p in enumerate(context.processes) if p.is_alive()]
            for p in context.processes:
                if p.is_alive():
                    p.kill()
                p.join()
    failures = []
    while not errors.empty():
        failures.append(errors.get())
    if timed_out and not failures:
        raise AssertionError(f"ranks {alive} did not finish within {deadline} s")
    if failures:
        raise AssertionError("\n".join(f"rank {r}:\n{tb}" for r, tb in sorted(failures)))
