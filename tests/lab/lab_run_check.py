"""chorus-lab as CI runs it (root): a 2-host lab at 200 Mbit/s runs a short allreduce sweep whose results chorus-perf
checks and whose busbw must sit near the link's rate; nothing of the lab is left after it, and what a SIGKILLed lab
leaves is removed by `chorus-lab clean`. Skipped (77) without root or without network namespaces.
Usage: lab_run_check.py BUILD_DIR"""

import os
import signal
import subprocess
import sys
import time

from lab_check_support import lab_namespaces, require_lab

build = sys.argv[1]
lab = os.path.join(build, "perf", "chorus-lab")
import tempfile  # noqa: E402
perf = os.path.join(build, "perf", "chorus-perf")
RATE = 200e6  # bit/s

require_lab(perf)

# A sweep across the shaped link: chorus-perf checks every result (#wrong must be 0) and the busbw must be the link's.
done = subprocess.run([sys.executable, lab, "run", "--hosts", "2", "--rate", "200mbit", "--timeout", "120", "--",
                       perf, "allreduce", "-b", "1M", "-e", "4M", "-f", "4", "-n", "3", "-w", "1"],
                      capture_output=True, text=True, timeout=180)
assert done.returncode == 0, f"exit {done.returncode}:\n{done.stdout}\n{done.stderr}"
rows = [line.split() for line in done.stdout.splitlines() if line.strip() and line.split()[0].isdigit()]
assert [int(r[0]) for r in rows] == [1 << 20, 4 << 20], done.stdout
for r in rows:
    assert r[8] == "0" and r[12] == "0", f"wrong results: {r}"
    # A 2-rank allreduce sends each byte once each way: busbw is the link's rate at best. From the time per call, as
    # the busbw column's two decimals hold only 0.02 GB/s (160 Mbit/s) near this rate. The bar is the shaping's: never
    # past the link, and not an unshaped link's either; how close to the rate it comes is the lab check's to measure.
    # The faster placement's time: three calls are few, and one preempted call slows its placement's average.
    busbw = int(r[0]) / (min(float(r[5]), float(r[9])) * 1e-6) * 8  # bit/s
    assert 0.50 * RATE <= busbw <= 1.05 * RATE, f"busbw {busbw / 1e6:.0f} Mbit/s on a 200 Mbit/s link: {r}"
assert not lab_namespaces(), f"left behind after a normal exit: {lab_namespaces()}"

# Delay where the kernel cannot emulate it (no netem here) is refused in one line, never silently dropped.
asked = subprocess.run([sys.executable, lab, "run", "--hosts", "2", "--delay", "50us", "--", "true"],
                       capture_output=True, text=True, timeout=60)
if asked.returncode != 0:  # else the kernel has netem and the lab ran with the delay
    assert asked.returncode == 2 and "no netem" in asked.stderr and len(asked.stderr.strip().splitlines()) == 1, \
        asked.stderr
assert not lab_namespaces(), f"left behind after the refusal: {lab_namespaces()}"

# A sweep: chorus-perf --algos in the lab, its CSV, JSON and plot.
import json  # noqa: E402
import tempfile  # noqa: E402
with tempfile.TemporaryDirectory(prefix="chorus-lab-sweep-") as out:
    done = subprocess.run([sys.executable, lab, "sweep", "--hosts", "2", "--rate", "200mbit", "--timeout", "120",
                           "--algos", "ring", "-b", "1M", "-e", "1M", "-n", "2", "--out", out],
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, f"sweep exit {done.returncode}:\n{done.stdout}\n{done.stderr}"
    with open(os.path.join(out, "sweep.json")) as f:
        results = json.load(f)["results"]
    assert sorted(r["algorithm"] for r in results) == ["default", "ring"], results
    for r in results:
        assert r["bytes"] == 1 << 20 and 0.80 <= r["link_fraction"] <= 1.05, r
        assert r["cpu_limited"] is False, r  # 200 Mbit/s is far below what this machine moves unshaped
    for name in ("sweep.csv", "sweep.svg", "sweep.png"):
        assert os.path.getsize(os.path.join(out, name)) > 0, name
assert not lab_namespaces(), f"left behind after the sweep: {lab_namespaces()}"

# A lab file's lab, up until brought down: two racks, two NICs per host, every NIC and uplink shaped; status shows
# it, a job runs in it (the lab stays up after), and down leaves nothing.
import json  # noqa: E402,F811
with tempfile.TemporaryDirectory(prefix="chorus-lab-file-") as d:
    path = os.path.join(d, "racks.json")
    with open(path, "w") as f:
        json.dump({"format": "chorus-lab/1", "name": "ci-racks", "hosts": 2, "nics_per_host": 2,
                   "link": {"rate": "200mbit"}, "fabric": {"kind": "racks", "racks": 2, "uplink_rate": "200mbit"}}, f)
    done = subprocess.run([sys.executable, lab, "up", path], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "ci-racks is up" in done.stdout, done.stderr
    assert sorted(lab_namespaces()) == ["chlab-ci-racks-h0", "chlab-ci-racks-h1", "chlab-ci-racks-sw"]
    status = subprocess.run([sys.executable, lab, "status", "ci-racks"], capture_output=True, text=True, timeout=30)
    assert status.returncode == 0 and "namespaces: 3 of 3" in status.stdout, status.stdout
    assert "eth0 10.77.0.1 tbf" in status.stdout and "eth1 10.78.0.2 tbf" in status.stdout, status.stdout
    sw = subprocess.run(["ip", "netns", "exec", "chlab-ci-racks-sw", "tc", "qdisc", "show"], capture_output=True,
                        text=True).stdout
    assert sw.count("qdisc tbf") == 2 * 2 + 2 * 2 * 2, sw  # host ports, then uplinks both ways, per rail
    ran = subprocess.run([sys.executable, lab, "run", path, "--timeout", "60", "--", "sh", "-c",
                          'test -n "$CHORUS_TOPO_FILE" && echo "$CHORUS_SOCKET_IFNAME $CHORUS_HOST_ID"'],
                         capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0 and "=eth0,eth1 chlab-ci-racks-h0" in ran.stdout, (ran.stdout, ran.stderr)
    assert len(lab_namespaces()) == 3, "run in a lab that is up must leave it up"
    down = subprocess.run([sys.executable, lab, "down", "ci-racks"], capture_output=True, text=True, timeout=60)
    assert down.returncode == 0, down.stderr
assert not lab_namespaces(), f"left behind after down: {lab_namespaces()}"

# A lab killed outright leaves its namespaces; clean (which every run does first too) removes them.
proc = subprocess.Popen([sys.executable, lab, "run", "--hosts", "2", "--", "sleep", "60"], start_new_session=True)
deadline = time.monotonic() + 30
while len(lab_namespaces()) < 3 and time.monotonic() < deadline:
    time.sleep(0.05)  # polling for the lab's state, with a deadline
assert len(lab_namespaces()) == 3, f"the lab did not come up: {lab_namespaces()}"
os.killpg(proc.pid, signal.SIGKILL)
proc.wait()
assert len(lab_namespaces()) == 3, "a SIGKILLed lab cannot clean up: its namespaces should still be there"
cleaned = subprocess.run([sys.executable, lab, "clean"], capture_output=True, text=True)
assert cleaned.returncode == 0, cleaned.stderr
assert not lab_namespaces(), f"left behind after clean: {lab_namespaces()}"
print("lab check passed")
