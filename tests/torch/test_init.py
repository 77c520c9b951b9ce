"""Every way torch starts a process group works for "chorus": torchrun (env://), init_method="tcp://...", an
explicit store with rank and world size; the process group's timeout becomes the communicator's."""

import datetime
import os
import random
import socket
import subprocess
import sys
import textwrap

import pytest
import torch
import torch.distributed as dist

from world import run_world

HERE = os.path.dirname(os.path.abspath(__file__))


def _free_port():
    """A port free now, below the kernel's ephemeral range: a port the kernel handed out (bind to 0) can be handed
    to another test's connection or listener before the store binds it (CI failed so); one below the range is
    taken only by an explicit bind."""
    with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
        ephemeral_low = int(f.read().split()[0])
    rng = random.Random()
    for _ in range(100):
        port = rng.randrange(max(1024, ephemeral_low - 12000), ephemeral_low)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port below {ephemeral_low}")


def _sum_of_ranks(n):
    x = torch.full((4,), float(dist.get_rank() + 1))
    dist.all_reduce(x)
    assert x.tolist() == [float(n * (n + 1) // 2)] * 4


def _tcp_init(rank, n, port):
    dist.destroy_process_group()  # run_world's own file:// group
    dist.init_process_group("chorus", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=n)
    _sum_of_ranks(n)


def _store_init(rank, n, port):
    dist.destroy_process_group()
    store = dist.TCPStore("127.0.0.1", port, n, is_master=rank == 0, timeout=datetime.timedelta(seconds=30))
    dist.init_process_group("chorus", store=store, rank=rank, world_size=n, timeout=datetime.timedelta(seconds=3))
    _sum_of_ranks(n)
    # The timeout reached the communicator: a call the peer never joins fails after about 3 s, not 30 minutes.
    if rank == 0:
        start = __import__("time").monotonic()
        with pytest.raises(RuntimeError, match="(?i)timed out|timeout"):
            dist.all_reduce(torch.ones(3))  # rank 1 makes no call: it waits for rank 0 below
        elapsed = __import__("time").monotonic() - start
        assert 2 < elapsed < 20, elapsed
    store.set(f"done/{rank}", "1")
    store.wait([f"done/{r}" for r in range(n)])


@pytest.mark.parametrize("n", [2, 3])
def test_tcp_init_method(n):
    port = _free_port()
    import functools
    run_world(functools.partial(_tcp_init, port=port), n)


def test_explicit_store_and_timeout():
    port = _free_port()
    import functools
    run_world(functools.partial(_store_init, port=port), 2, deadline=90)


def test_torchrun_env_init(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent("""
        import torch, torch.distributed as dist, chorus_torch
        dist.init_process_group("chorus")
        x = torch.ones(3) * (dist.get_rank() + 1)
        dist.all_reduce(x)
        assert x.tolist() == [3.0] * 3, x
        print(f"rank {dist.get_rank()} ok", flush=True)  # one write: torchrun prefixes each chunk it reads
        dist.destroy_process_group()
    """))
    env = dict(os.environ, PYTHONPATH=os.environ.get("PYTHONPATH", ""), OMP_NUM_THREADS="1")
    # Debian 12's torchrun (Python 3.11) breaks with its default log redirection: -r 1 -t 1 avoids it.
    # torchrun takes a port number, not a bound socket: another test's explicit bind may take it first (seen in CI,
    # "failed to bind ... errno: 98", when the port came from the ephemeral range), so a bind failure gets a new
    # port, up to three times. Its logs go under the test's own directory (by default torchrun leaves a
    # /tmp/torchelastic_* directory behind for every run).
    for attempt in range(3):
        cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "-r", "1", "-t", "1",
               "--log_dir", str(tmp_path / f"torchrun-{attempt}"), "--master_port", str(_free_port()), str(script)]
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120, start_new_session=True)
        if done.returncode == 0 or "errno: 98" not in done.stderr:
            break
    assert done.returncode == 0, done.stdout + done.stderr
    assert "rank 0 ok" in done.stdout and "rank 1 ok" in done.stdout, done.stdout
