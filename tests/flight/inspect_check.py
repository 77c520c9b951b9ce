#!/usr/bin/env python3
"""The flight recorder and chorus-inspect on live 4-rank jobs (flight_worker, launched here with CHORUS_* so that
the check holds each rank's stdin and pid):
  stall     rank 3 held before a call: chorus-inspect names it as outside Chorus within a few seconds; the
            listeners the cards name answer nothing to a request without their token, or with a wrong one
  killed    rank 3 killed while held: reported as not answering
  mismatch  rank 1 calls a broadcast where the others call an allreduce: the ranks are listed in different calls
  timeout   CHORUS_TIMEOUT=2 with rank 3 held: ranks 0-2 dump their records, rank 3 dumps on SIGUSR1, and
            chorus-inspect --dumps gives the verdict from the files
  ipv6      the stall over a store at [::1]: the cards name IPv6 addresses and the listeners answer on them
  chorusrun a chorusrun job (rank 3 held on a FIFO): chorus-inspect with nothing but the address chorusrun prints
            names rank 3, through the job file chorusrun leaves (0600, in a 0700 directory); a copy open to others
            is refused; the file goes when chorusrun ends, and when it is stopped by SIGTERM
Every job has a deadline and is killed whole at the end (no orphans).
Usage: inspect_check.py BUILD_DIR CHORUSRUN"""
import os
import re
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time

BUILD = sys.argv[1]
WORKER = os.path.join(BUILD, "tests", "flight_worker")
INSPECT = os.path.join(BUILD, "perf", "chorus-inspect")
CHORUSRUN = sys.argv[2]
RANKS = 4
JOB = "flightcheck%d" % os.getpid()


def free_port(host="127.0.0.1"):
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def inspect_until(inspect, pattern, seconds=15):
    """Asks again until the reading matches (the ranks get there at their own pace), within a deadline."""
    deadline = time.monotonic() + seconds
    out = ""
    while time.monotonic() < deadline:
        began = time.monotonic()
        out = inspect()
        if re.search(pattern, out):
            return out, time.monotonic() - began
        time.sleep(0.2)  # polling interval, not synchronization: the loop waits for the reading itself
    raise AssertionError("no %r within %d s; last reading:\n%s" % (pattern, seconds, out))


class Job:
    def __init__(self, mode, extra_env=None, args=(), host="127.0.0.1"):
        self.port = free_port(host)
        self.store = ("[%s]:%d" if ":" in host else "%s:%d") % (host, self.port)
        self.procs = []
        for rank in range(RANKS):
            env = dict(os.environ, CHORUS_RANK=str(rank), CHORUS_WORLD_SIZE=str(RANKS), CHORUS_JOB_ID=JOB,
                       CHORUS_STORE=self.store, CHORUS_TRANSPORT="shm")
            env.pop("CHORUS_SECRET", None)
            env.update(extra_env or {})
            self.procs.append(subprocess.Popen([WORKER, mode, *args], env=env, stdin=subprocess.PIPE,
                                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))

    def inspect(self):
        r = subprocess.run([INSPECT, self.store, "--job", JOB], capture_output=True, text=True, timeout=20)
        return r.stdout + r.stderr

    def inspect_until(self, pattern, seconds=15):
        return inspect_until(self.inspect, pattern, seconds)

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
        check_tokens_asked(job)
        job.procs[3].stdin.write("go\n")
        job.procs[3].stdin.flush()
        results = job.finish()
        assert all(code == 0 for code, _ in results), results
    finally:
        job.kill()


def check_tokens_asked(job):
    """A listener found by its port alone (as a scan would) says nothing: it closes a request without its process's
    token, or with a wrong token, unanswered."""
    raw = subprocess.run([INSPECT, job.store, "--job", JOB, "--raw"], capture_output=True, text=True, timeout=20)
    addresses = sorted(set(re.findall(r"^card (\S+) rank", raw.stdout, re.M)))
    assert len(addresses) == RANKS, raw.stdout[:2000]
    for request in (b"chorus-inspect/1 newest=4\n", b"chorus-inspect/1 token=" + b"0" * 32 + b" newest=4\n"):
        for address in addresses:
            host, port = address.rsplit(":", 1)
            with socket.create_connection((host.strip("[]"), int(port)), timeout=5) as s:
                s.sendall(request)
                s.settimeout(5)
                assert s.recv(4096) == b"", (address, request)
    print("stall: %d listeners answered nothing without their token" % len(addresses))


def check_ipv6():
    try:
        free_port("::1")
    except OSError as e:
        print("ipv6: skipped (no ::1 here: %s)" % e)
        return
    job = Job("stall", args=("3",), host="::1")
    try:
        out, took = job.inspect_until(r"rank 3 is outside Chorus")
        assert "4 process(es) asked, 4 answered" in out, out
        print(out)
        print("ipv6: named in %.3f s over the store [::1]" % took)
        # The cards name the listeners by the store connection's IPv6 address, and they answered there.
        raw = subprocess.run([INSPECT, job.store, "--job", JOB, "--raw"], capture_output=True, text=True,
                             timeout=20).stdout
        cards = re.findall(r"^card (\S+) rank ([0-9]+)", raw, re.M)
        assert len(cards) == RANKS and all(a.startswith("[::1]:") for a, _ in cards), raw[:2000]
        job.procs[3].stdin.write("go\n")
        job.procs[3].stdin.flush()
        results = job.finish()
        assert all(code == 0 for code, _ in results), results
    finally:
        job.kill()


class ChorusrunJob:
    """chorusrun -n 4 flight_worker stall 3 with its own XDG_RUNTIME_DIR (the job file's directory) and rank 3 held
    on a FIFO; nothing of the job's id or secret in the environment chorus-inspect gets."""

    def __init__(self, folder):
        self.runtime = os.path.join(folder, "runtime")
        os.mkdir(self.runtime, 0o700)
        self.gate = os.path.join(folder, "gate")
        os.mkfifo(self.gate)
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ("CHORUS_JOB_ID", "CHORUS_SECRET", "CHORUS_STORE", "CHORUS_DEBUG")}
        self.env["XDG_RUNTIME_DIR"] = self.runtime
        job_env = dict(self.env, FLIGHT_GATE=self.gate, CHORUS_TRANSPORT="shm")
        self.proc = subprocess.Popen([CHORUSRUN, "-n", str(RANKS), "--timeout", "60", WORKER, "stall", "3"],
                                     env=job_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     start_new_session=True)
        self.address = self.printed_address()

    def printed_address(self, seconds=20):
        """The address from chorusrun's line on stderr ("... chorus-inspect 127.0.0.1:PORT"), within a deadline."""
        deadline = time.monotonic() + seconds
        seen = ""
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.proc.stderr], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            line = self.proc.stderr.readline()
            if not line:
                break
            seen += line
            m = re.search(r"chorus-inspect (\S+)$", line.strip())
            if m:
                return m.group(1)
        raise AssertionError("chorusrun printed no address within %d s:\n%s" % (seconds, seen))

    def inspect(self, *extra):
        r = subprocess.run([INSPECT, self.address, *extra], capture_output=True, text=True, timeout=20, env=self.env)
        return r.stdout + r.stderr

    def job_files(self):
        folder = os.path.join(self.runtime, "chorus")
        return [os.path.join(folder, n) for n in os.listdir(folder)] if os.path.isdir(folder) else []

    def release(self):
        fd = os.open(self.gate, os.O_WRONLY | os.O_NONBLOCK)  # ENXIO unless rank 3 holds the FIFO open: it does
        os.write(fd, b"go\n")
        os.close(fd)

    def finish(self, seconds=30):
        try:
            out, err = self.proc.communicate(timeout=seconds)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            out, err = self.proc.communicate()
        return self.proc.returncode, out + err

    def kill(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


def check_chorusrun(folder):
    job = ChorusrunJob(folder)
    try:
        files = job.job_files()
        assert len(files) == 1, files
        mode = os.stat(files[0]).st_mode & 0o777
        assert mode == 0o600 and os.stat(os.path.dirname(files[0])).st_mode & 0o777 == 0o700, oct(mode)
        out, took = inspect_until(job.inspect, r"rank 3 is outside Chorus")
        print("chorusrun: `chorus-inspect %s` (no job id, no secret) named rank 3 in %.3f s" % (job.address, took))
        print(out)
        # A copy that others could read is refused, and so is one another user could have written.
        exposed = os.path.join(folder, "exposed")
        os.mkdir(exposed, 0o700)
        copy = os.path.join(exposed, "job")
        with open(files[0]) as f, open(copy, "w") as g:
            g.write(f.read())
        os.chmod(copy, 0o644)
        refused = job.inspect("--job-file", copy)
        assert "open to group or others: refused" in refused, refused
        os.chmod(copy, 0o600)
        assert "rank 3 is outside Chorus" in job.inspect("--job-file", copy)
        job.release()
        code, text = job.finish()
        assert code == 0, text
        assert job.job_files() == [], job.job_files()
    finally:
        job.kill()
    # Stopped by SIGTERM while rank 3 is held: the file goes too.
    os.rename(os.path.join(folder, "runtime"), os.path.join(folder, "runtime.1"))
    os.unlink(os.path.join(folder, "gate"))
    job = ChorusrunJob(folder)
    try:
        assert len(job.job_files()) == 1
        inspect_until(job.inspect, r"rank 3 is outside Chorus")
        job.proc.send_signal(signal.SIGTERM)
        code, text = job.finish()
        assert code != 0, text
        assert job.job_files() == [], job.job_files()
        print("chorusrun: the job file is gone after the job, and after SIGTERM (exit %d)" % code)
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
    for path in (WORKER, INSPECT, CHORUSRUN):
        if not os.path.exists(path):  # a tree that built only some targets (scripts/test.sh's sanitizer trees)
            print("skipped: %s is not built" % path)
            return 77
    check_stall()
    check_ipv6()
    with tempfile.TemporaryDirectory() as folder:
        check_chorusrun(folder)
    check_killed()
    with tempfile.TemporaryDirectory() as folder:
        check_timeout(folder)
    with tempfile.TemporaryDirectory() as folder:
        check_mismatch(folder)
    print("inspect_check: every check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
