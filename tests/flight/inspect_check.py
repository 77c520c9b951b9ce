#!/usr/bin/env python3
"""The flight recorder and chorus-inspect on live 4-rank jobs (flight_worker, launched here with CHORUS_* so that
the check holds each rank's stdin and pid):
  stall     rank 3 held before a call: chorus-inspect names it as outside Chorus within a few seconds
  killed    rank 3 killed while held: reported as not answering
  mismatch  rank 1 calls a broadcast where the others call an allreduce: the ranks are listed in different calls
  timeout   CHORUS_TIMEOUT=2 with rank 3 held: ranks 0-2 dump their records, rank 3 dumps on SIGUSR1, and
            chorus-inspect --dumps gives the verdict from the files
Every job has a deadline and is killed whole at the end (no orphans)."""
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

BUILD = sys.argv[1]
WORKER = os.path.join(BUILD, "tests", "flight_worker")
INSPECT = os.path.join(BUILD, "perf", "chorus-inspect")
RANKS = 4
JOB = "flightcheck%d" % os.getpid()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Job:
    def __init__(self, mode, extra_env=None, args=()):
        self.port = free_port()
        self.procs = []
        for rank in range(RANKS):
            env = dict(os.environ, CHORUS_RANK=str(rank), CHORUS_WORLD_SIZE=str(RANKS), CHORUS_JOB_ID=JOB,
                       CHORUS_STORE="127.0.0.1:%d" % self.port, CHORUS_TRANSPORT="shm")
            env.pop("CHORUS_SECRET", None)
            env.update(extra_env or {})
            self.procs.append(subprocess.Popen([WORKER, mode, *args], env=env, stdin=subprocess.PIPE,
                                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))

    def inspect(self):
        r = subprocess.run([INSPECT, "127.0.0.1:%d" % self.port, "--job", JOB], capture_output=True, text=True,
                           timeout=20)
        return r.stdout + r.stderr

    def inspect_until(self, pattern, seconds=15):
        """Asks again until the reading matches (the ranks get there at their own pace), within a deadline."""
        deadline = time.monotonic() + seconds
        out = ""
        while time.monotonic() < deadline:
            began = time.monotonic()
            out = self.inspect()
            if re.search(pattern, out):
                return out, time.monotonic() - began
            time.sleep(0.2)  # polling interval, not synchronization: the loop waits for the reading itself
        raise AssertionError("no %r within %d s; last reading:\n%s" % (pattern, seconds, out))

    def finish(self, seconds=30):
        outs = []
        for p in self.procs:
            try:
                out, err = p.communicate(timeout=seconds)
            except subprocess.TimeoutExpired:
                p.kill()
                out, err = p.communicate()
            outs.append((p.returncode, out + err))
        return outs

    def kill(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait()


def check_stall():
    job = Job("stall", args=("3",))
    try:
        out, took = job.inspect_until(r"rank 3 is outside Chorus")
        print("stall: named in %.3f s" % took)
        # Once they sleep, the waiting ranks say whom they wait for.
        out, took = job.inspect_until(r"rank 0: allreduce #6 .* waiting [0-9.]+ s")
        print(out)
        print("stall: answered in %.3f s" % took)
        assert re.search(r"ranks 0-2 have waited [0-9.]+ s in allreduce #6 for rank 3", out), out
        job.procs[3].stdin.write("go\n")
        job.procs[3].stdin.flush()
        results = job.finish()
        assert all(code == 0 for code, _ in results), results
    finally:
        job.kill()


def check_killed():
    job = Job("stall", args=("3",), extra_env={"FLIGHT_HOLD": "1"})
    try:
        job.inspect_until(r"rank 3 is outside Chorus")
        job.procs[3].kill()
        job.procs[3].wait()
        out, took = job.inspect_until(r"ranks 0-2 failed in allreduce #6 after [0-9.]+ s for rank 3")
        print(out)
        assert "rank 3 does not answer" in out, out
        print("killed: answered in %.3f s" % took)
        results = job.finish()
        assert all(code == 3 for code, _ in results[:3]), results  # the survivors fail, naming the lost rank
    finally:
        job.kill()


def check_mismatch(folder):
    job = Job("mismatch", extra_env={"CHORUS_TIMEOUT": "3", "CHORUS_FLIGHT_DIR": folder})
    try:
        results = job.finish()
        assert all(code == 3 for code, _ in results), results
        out = subprocess.run([INSPECT, "--dumps", folder], capture_output=True, text=True, timeout=20).stdout
        print(out)
        assert re.search(r"called different things as call #6:.* rank 1 broadcast #6", out), out
    finally:
        job.kill()


def check_timeout(folder):
    job = Job("stall", args=("3",), extra_env={"CHORUS_TIMEOUT": "2", "CHORUS_FLIGHT_DIR": folder})
    try:
        results = []
        for p in job.procs[:3]:
            out, err = p.communicate(timeout=30)
            results.append((p.returncode, out + err))
        # The first to time out gives up on its peers, which may fail at once hearing it: one timeout at least.
        assert all(code == 3 for code, _ in results) and any("timed out" in t for _, t in results), results
        for rank in range(3):
            assert any(n.endswith("-rank%d.json" % rank) for n in os.listdir(folder)), os.listdir(folder)
        # Rank 3 is still held: SIGUSR1 makes it write its record without disturbing it.
        job.procs[3].send_signal(signal.SIGUSR1)
        deadline = time.monotonic() + 10
        while not any(n.endswith("-rank3.json") for n in os.listdir(folder)):
            assert time.monotonic() < deadline, os.listdir(folder)
            time.sleep(0.05)  # polling for the file, within a deadline
        assert job.procs[3].poll() is None, "SIGUSR1 ended the rank"
        out = subprocess.run([INSPECT, "--dumps", folder], capture_output=True, text=True, timeout=20).stdout
        print(out)
        assert re.search(r"ranks 0-2 failed in allreduce #6 after [0-9.]+ s for rank 3", out), out
        assert re.search(r"rank 3 is outside Chorus", out), out
    finally:
        job.kill()


def main():
    for path in (WORKER, INSPECT):
        if not os.path.exists(path):  # a tree that built only some targets (scripts/test.sh's sanitizer trees)
            print("skipped: %s is not built" % path)
            return 77
    check_stall()
    check_killed()
    with tempfile.TemporaryDirectory() as folder:
        check_timeout(folder)
    with tempfile.TemporaryDirectory() as folder:
        check_mismatch(folder)
    print("inspect_check: every check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
