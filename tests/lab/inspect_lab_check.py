"""chorus-inspect across the lab's hosts (root): 2 hosts x 2 ranks run flight_worker with rank 3 (on host 1) held
before its allreduce on a FIFO; chorus-inspect, run in host 1's namespace, reads the inspect cards from the store on
host 0, asks every rank at the address its card names, and must name rank 3 as outside Chorus, with all 4 answering.
Once over IPv4 and once over IPv6-only hosts (ULA addresses: the cards and listeners are IPv6 there; skipped where the
kernel has no IPv6). It reports chorus-inspect's answer time (median of 7 askings). Nothing of the lab is left after.
Skipped (77) without root or network namespaces.
Usage: inspect_lab_check.py BUILD_DIR [HOSTS RANKS_PER_HOST]   (2 2 in CI; the last rank is the one held)"""

import json
import os
import re
import secrets
import statistics
import subprocess
import sys
import tempfile
import time

from lab_check_support import lab_cleaned_after, lab_namespaces, require_lab

build = sys.argv[1]
lab = os.path.join(build, "perf", "chorus-lab")
inspect = os.path.join(build, "perf", "chorus-inspect")
worker = os.path.join(build, "tests", "flight_worker")
HOSTS, PER_HOST = (int(sys.argv[2]), int(sys.argv[3])) if len(sys.argv) > 3 else (2, 2)
RANKS, HELD = HOSTS * PER_HOST, HOSTS * PER_HOST - 1
STORES = {"ipv4": ("10.77.0.1:29411", "10.77.0."), "ipv6": ("[fd00:77::1]:29411", "[fd00:77::")}

for path in (worker, lab):
    if not os.path.exists(path):
        print(f"skipped: {path} is not built")
        sys.exit(77)
require_lab(inspect)


def host1_namespace():
    return next((ns for ns in lab_namespaces() if ns.endswith("-h1")), None)


def ask(store, job, secret, *extra):
    """chorus-inspect in host 1's namespace (the store is on host 0); "" while the lab is not up yet."""
    ns = host1_namespace()
    if ns is None:
        return ""
    env = dict(os.environ, CHORUS_SECRET=secret)
    done = subprocess.run(["ip", "netns", "exec", ns, inspect, store, "--job", job, *extra], capture_output=True,
                          text=True, timeout=20, env=env)
    return done.stdout + done.stderr


def check(addresses, folder):
    store, prefix = STORES[addresses]
    gate = os.path.join(folder, f"gate-{addresses}")
    os.mkfifo(gate)
    job, secret = f"inspectlab{os.getpid()}{addresses}", secrets.token_hex(32)
    env = dict(os.environ, CHORUS_JOB_ID=job, CHORUS_SECRET=secret, FLIGHT_GATE=gate)
    log = open(os.path.join(folder, f"lab-{addresses}.log"), "w+")
    # The link's figures given, so that the lab measures nothing before the job: it is up in a few seconds.
    lab_file = os.path.join(folder, f"{addresses}.json")
    with open(lab_file, "w") as f:
        json.dump({"format": "chorus-lab/1", "name": f"ci-inspect-{addresses}", "hosts": HOSTS,
                   "ranks_per_host": PER_HOST, "link": {"rate": "1gbit", "latency_us": 30}, "addresses": addresses}, f)
    proc = subprocess.Popen([sys.executable, lab, "run", lab_file, "--timeout", "60", "--", worker, "stall", str(HELD)],
                            env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        out = ""
        while not re.search(rf"rank {HELD} is outside Chorus", out):
            assert time.monotonic() < deadline and proc.poll() is None, f"no verdict; last reading:\n{out}"
            time.sleep(0.2)  # polling interval, not synchronization: the loop waits for the reading itself
            out = ask(store, job, secret)
        assert f"1 communicator(s), {RANKS} process(es) asked, {RANKS} answered" in out, out
        raw = ask(store, job, secret, "--raw")
        cards = re.findall(r"^card (\S+) rank ([0-9]+)", raw, re.M)
        assert len(cards) == RANKS and all(a.startswith(prefix) for a, _ in cards), raw[:2000]
        hosts = sorted({a.rsplit(":", 1)[0] for a, _ in cards})
        assert len(hosts) == HOSTS, cards  # each host's ranks at that host's address
        took = []
        for _ in range(7):
            reading = ask(store, job, secret)
            took.append(float(re.search(r"answered, in ([0-9.]+) s", reading).group(1)))
        print(f"{addresses}, {HOSTS} hosts x {PER_HOST} ranks: cards at {', '.join(hosts)}; chorus-inspect from "
              f"host 1, median of 7: "
              f"{statistics.median(took):.3f} s (range {min(took):.3f}-{max(took):.3f})")
        print("\n".join(line for line in raw.splitlines() if line.startswith("card ")))
        print(out)
        fd = os.open(gate, os.O_WRONLY | os.O_NONBLOCK)  # ENXIO unless the held rank has the FIFO open: it does
        os.write(fd, b"go\n")
        os.close(fd)
        code = proc.wait(timeout=60)
        log.seek(0)
        assert code == 0, f"lab run exit {code}:\n{log.read()[-3000:]}"
    finally:
        if proc.poll() is None:
            proc.terminate()  # chorus-lab stops its ranks and removes the lab on SIGTERM
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, 9)
                proc.wait()
        log.close()
    assert not lab_namespaces(), f"left behind: {lab_namespaces()}"


with tempfile.TemporaryDirectory(prefix="chorus-inspect-lab-") as d, lab_cleaned_after(lab):
    check("ipv4", d)
    if os.path.isdir("/proc/sys/net/ipv6"):
        check("ipv6", d)
    else:
        print("ipv6: skipped (the kernel has no IPv6)")
print("inspect lab check passed")
