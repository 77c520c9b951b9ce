"""Running a command once per rank inside its host's namespace, with the environment Chorus reads, and stopping
them all together: on the first failure, on timeout, on Ctrl-C and on SIGTERM."""

import os
import secrets
import signal
import subprocess
import sys
import time

from . import plan


def rank_environment(spec, tag, rank, host, local, job, secret, topo_file=None):
    env = dict(os.environ, CHORUS_RANK=str(rank), CHORUS_WORLD_SIZE=str(spec.nranks), CHORUS_LOCAL_RANK=str(local),
               CHORUS_STORE=plan.host_port(plan.address(0, 0, spec.addresses), plan.STORE_PORT), CHORUS_JOB_ID=job, CHORUS_SECRET=secret,
               CHORUS_HOST_ID=plan.host_ns(tag, host), CHORUS_SOCKET_IFNAME=plan.ifname_env(spec))
    # The cost model takes the lab's links as its network figures, unless the user named a topology or a probe.
    if topo_file and "CHORUS_TOPO_FILE" not in os.environ and os.environ.get("CHORUS_TOPO_PROBE", "0") == "0":
        env["CHORUS_TOPO_FILE"] = topo_file
    return env


class Stop:
    """Records the first SIGINT, SIGTERM or SIGHUP instead of dying, so the lab is torn down."""

    def __init__(self):
        self.signal = None
        self.old = {}

    def __enter__(self):
        def on_signal(signum, _frame):
            self.signal = self.signal or signum
        self.old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
        return self

    def __exit__(self, *exc):
        for s, h in self.old.items():
            signal.signal(s, h)


def pinned_to(cpu):
    """A preexec_fn binding the child to one CPU (None: left to the scheduler). The lab is single-threaded, so
    running Python between fork and exec is safe here."""
    if cpu is None:
        return None
    return lambda: os.sched_setaffinity(0, {cpu})


def run_ranks(spec, tag, command, timeout, stop, topo_file=None, rank0_out=None, bind=True):
    """Runs command once per rank; returns the first failing rank's exit code (0 when all pass, 124 on timeout,
    128 + signal when stopped). bind: each emulated host's ranks on its share of the cores (plan.rank_cpus)."""
    # The user's job id and secret are kept (chorus-inspect, run beside the job, needs both); otherwise fresh ones.
    job = os.environ.get("CHORUS_JOB_ID") or f"{tag}-{secrets.token_hex(4)}"
    secret = os.environ.get("CHORUS_SECRET") or secrets.token_hex(32)
    cpus = plan.rank_cpus(spec, os.sched_getaffinity(0)) if bind else [None] * spec.nranks
    procs = []
    for rank, host, local in plan.rank_layout(spec):
        env = rank_environment(spec, tag, rank, host, local, job, secret, topo_file)
        procs.append(subprocess.Popen(["ip", "netns", "exec", plan.host_ns(tag, host)] + command, env=env,
                                      start_new_session=True, stdout=rank0_out if rank == 0 else None,
                                      preexec_fn=pinned_to(cpus[rank])))
    deadline = time.monotonic() + timeout if timeout else None
    code = 0
    while True:
        states = [p.poll() for p in procs]
        failed = [c for c in states if c not in (None, 0)]
        if failed and code == 0:
            code = failed[0] if failed[0] > 0 else 128 - failed[0]
        if all(c is not None for c in states):
            return code
        late = deadline is not None and time.monotonic() > deadline
        if failed or stop.signal or late:
            if late and code == 0:
                code = 124
                print(f"chorus-lab: timed out after {timeout} s", file=sys.stderr)
            if stop.signal and code == 0:
                code = 128 + stop.signal
            stop_all(procs)
            return code
        time.sleep(0.05)  # polling the ranks' exit codes, not synchronisation between them


def stop_all(procs):
    for p in procs:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
    grace = time.monotonic() + 2
    while time.monotonic() < grace and any(p.poll() is None for p in procs):
        time.sleep(0.05)  # the ranks' own exit, with a deadline
    for p in procs:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
    for p in procs:
        p.wait()
