"""chorusCommInitFromEnv under Open MPI's mpirun with no store named: rank 0's store address goes to the other ranks
through PMIx. Checks every collective on 4 ranks and chorus-perf; that the rank and size also come from PMIx alone
(as under prterun); that CHORUS_STORE still wins under mpirun; that chorusrun's ranks never try PMIx even when they
inherit a PMIx environment; and that a missing libpmix is a clear error. Skipped (77) without mpirun or libpmix.
Usage: pmix_launch_check.py BUILD_DIR"""

import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys

build = sys.argv[1]
worker = os.path.join(build, "tests", "chorus_collective_worker")
perf = os.path.join(build, "perf", "chorus-perf")
chorusrun = os.path.join(build, "launcher", "chorusrun")
DEADLINE = 60  # seconds per job: mpirun --timeout ends the job, this bounds mpirun itself

mpirun = shutil.which("mpirun")
if not mpirun:
    print("mpirun is not installed (Debian: openmpi-bin): skipped")
    sys.exit(77)
try:
    ctypes.CDLL("libpmix.so.2")
except OSError as e:
    print(f"libpmix.so.2 cannot be loaded ({e}; Debian: libpmix2): skipped")
    sys.exit(77)
for binary in (worker, perf, chorusrun):
    if not os.path.exists(binary):
        print(f"{binary} is not built here: skipped")
        sys.exit(77)

# Open MPI refuses root unless told; traffic stays on loopback.
BASE = [mpirun, "--oversubscribe", "--timeout", str(DEADLINE), "-x", "CHORUS_SOCKET_IFNAME=lo"]
if os.geteuid() == 0:
    BASE.insert(1, "--allow-run-as-root")
ENV = {k: v for k, v in os.environ.items()
       if not k.startswith(("CHORUS_", "PMIX_", "OMPI_", "SLURM_")) and k not in ("MASTER_ADDR", "MASTER_PORT",
                                                                                  "RANK", "WORLD_SIZE")}


def run(cmd, env=ENV):
    """Runs a job in its own process group, which goes whole when the deadline passes."""
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=DEADLINE + 30)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        sys.exit(f"{' '.join(cmd)} ran past {DEADLINE + 30} s:\n{out}")
    return p.returncode, out


def expect_ok(what, cmd, env=ENV, contains=(), lacks=()):
    rc, out = run(cmd, env)
    if rc != 0:
        sys.exit(f"{what}: {' '.join(cmd)} exited {rc}:\n{out}")
    for text in contains:
        if text not in out:
            sys.exit(f"{what}: the output lacks '{text}':\n{out}")
    for text in lacks:
        if text in out:
            sys.exit(f"{what}: the output has '{text}':\n{out}")
    print(f"{what}: ok")
    return out


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


ready = "communicator ready"
expect_ok("every collective, 4 ranks, store through PMIx",
          BASE + ["-np", "4", "-x", "CHORUS_DEBUG=INFO", worker, "every_collective"],
          contains=["(Open MPI OMPI_COMM_WORLD_RANK/SIZE, store through PMIx)"])
out = expect_ok("chorus-perf allreduce, 4 ranks", BASE + ["-np", "4", perf, "allreduce", "-b", "8", "-e", "64K",
                                                          "-f", "8", "-n", "5", "-w", "1"])
print(out.strip().splitlines()[-1])
# prterun's ranks have no OMPI_COMM_WORLD_* variables: the rank and size come from PMIx too.
expect_ok("rank and size from PMIx alone", BASE + ["-np", "3", "-x", "CHORUS_DEBUG=INFO", "env", "-u",
                                                   "OMPI_COMM_WORLD_RANK", "-u", "OMPI_COMM_WORLD_SIZE", worker,
                                                   "allreduce_sum"],
          contains=["(PMIx, store through PMIx)"])
store = f"127.0.0.1:{free_port()}"
expect_ok("CHORUS_STORE wins under mpirun",
          BASE + ["-np", "2", "-x", "CHORUS_DEBUG=INFO", "-x", f"CHORUS_STORE={store}", worker, "broadcast"],
          contains=[f"store {store} (Open MPI OMPI_COMM_WORLD_RANK/SIZE)"], lacks=["through PMIx"])
expect_ok("CHORUS_STORE wins with the rank and size from PMIx alone",
          BASE + ["-np", "2", "-x", "CHORUS_DEBUG=INFO", "-x", f"CHORUS_STORE=127.0.0.1:{free_port()}", "env", "-u",
                  "OMPI_COMM_WORLD_RANK", "-u", "OMPI_COMM_WORLD_SIZE", worker, "broadcast"],
          contains=["(PMIx)"], lacks=["through PMIx"])
# A PMIx environment chorusrun's ranks inherit (chorusrun started inside an mpirun or srun job) must not be used:
# with the library named unloadable, any attempt would fail.
inherited = dict(ENV, PMIX_RANK="0", PMIX_NAMESPACE="outer-job", PMIX_SERVER_URI4="outer-job.0;tcp4://127.0.0.1:1",
                 CHORUS_PMIX_LIBRARY="/nonexistent/libpmix.so.2")
expect_ok("chorusrun ignores an inherited PMIx environment",
          [chorusrun, "-n", "2", "--timeout", str(DEADLINE), worker, "broadcast"], env=inherited)
rc, out = run(BASE + ["-np", "2", "-x", "CHORUS_PMIX_LIBRARY=/nonexistent/libpmix.so.2", worker, "broadcast"])
for text in ("libpmix could not be loaded", "/nonexistent/libpmix.so.2", "CHORUS_STORE"):
    if rc == 0 or text not in out:
        sys.exit(f"missing libpmix: expected a failure naming '{text}', got exit {rc}:\n{out}")
print("missing libpmix: a clear error: ok")
