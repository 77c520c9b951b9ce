"""TCP over two NICs per host, as CI runs it (root): in a 2-host lab with two 200 Mbit/s NICs per host, a 2-rank
allreduce stripes over both (the connection names both rails, the results check, each NIC carries about half of its
host's bytes), rails of unequal rates are weighed by their rates, and when one host's second NIC goes down mid-run
both ranks fail within seconds, the one that lost it naming the interface. Nothing of the lab is left after. Skipped
(77) without root or network namespaces.
Usage: multirail_check.py BUILD_DIR"""

import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

from lab_check_support import lab_namespaces, require_lab

build = sys.argv[1]
lab = os.path.join(build, "perf", "chorus-lab")
perf = os.path.join(build, "perf", "chorus-perf")
RATE = 200e6  # bit/s per NIC
NAME = "ci-rails"

require_lab(perf)


def tx_bytes(host, dev):
    """What the lab host's NIC has sent, by its own counter."""
    out = subprocess.run(["ip", "netns", "exec", f"chlab-{NAME}-h{host}", "cat",
                          f"/sys/class/net/{dev}/statistics/tx_bytes"], capture_output=True, text=True, check=True)
    return int(out.stdout)


with tempfile.TemporaryDirectory(prefix="chorus-rails-") as d:
    path = os.path.join(d, "rails.json")
    with open(path, "w") as f:
        json.dump({"format": "chorus-lab/1", "name": NAME, "hosts": 2, "nics_per_host": 2,
                   "link": {"rate": "200mbit"}}, f)
    up = subprocess.run([sys.executable, lab, "up", path], capture_output=True, text=True, timeout=60)
    assert up.returncode == 0, up.stderr
    try:
        # Both rails carry a checked allreduce: each host's bytes split about evenly over its two NICs, counted by the
        # NICs themselves. Not a time bar: tbf drops what overflows its queue and TCP recovers, so the time of 8 calls
        # spread 177-258 ms a call across machines (the multi-rail speedup is multirail_bench.sh's to measure, not
        # this test's).
        before = {(i, dev): tx_bytes(i, dev) for i in range(2) for dev in ("eth0", "eth1")}
        done = subprocess.run([sys.executable, lab, "run", path, "--timeout", "120", "--", "env", "CHORUS_DEBUG=INFO",
                               "CHORUS_TRANSPORT=tcp", perf, "allreduce", "-b", "8M", "-e", "8M", "-n", "8", "-w", "1"],
                              capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, f"exit {done.returncode}:\n{done.stdout}\n{done.stderr}"
        both = done.stdout + done.stderr
        assert "over eth0 (" in both and "eth1 (" in both, both
        rows = [line.split() for line in done.stdout.splitlines() if line.strip() and line.split()[0].isdigit()]
        assert len(rows) == 1 and rows[0][8] == "0" and rows[0][12] == "0", done.stdout
        # 2 ranks, 9 calls out of place and 9 in place: each rank sends the buffer's 8 MiB once a call.
        payload = 18 * 8 * 2**20
        for i in range(2):
            sent = {dev: tx_bytes(i, dev) - before[(i, dev)] for dev in ("eth0", "eth1")}
            total = sum(sent.values())
            assert total >= payload, f"host {i} sent {total} bytes for {payload} of payload"
            for dev, n in sent.items():
                assert n >= 0.35 * total, f"host {i}'s {dev} carried {n} of its {total} bytes: {sent}"
            print(f"host {i}: eth0 {sent['eth0'] / total:.2f}, eth1 {sent['eth1'] / total:.2f} of {total} bytes")

        # Unequal rails: each host's eth1 (and its switch port) reshaped to a quarter of eth0's rate; the probe must
        # weigh the rails about 4:1, or the slow one would hold the pair to twice its own rate.
        for i in range(2):
            for ns, dev in ((f"chlab-{NAME}-h{i}", "eth1"), (f"chlab-{NAME}-sw", f"p{i}r1")):
                subprocess.run(["ip", "netns", "exec", ns, "tc", "qdisc", "replace", "dev", dev, "root", "handle", "1:",
                                "tbf", "rate", "50mbit", "burst", "64kb", "latency", "10ms"], check=True)
        done = subprocess.run([sys.executable, lab, "run", path, "--timeout", "120", "--", "env", "CHORUS_DEBUG=INFO",
                               "CHORUS_TRANSPORT=tcp", perf, "allreduce", "-b", "1M", "-e", "1M", "-n", "1", "-w", "0"],
                              capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, f"exit {done.returncode}:\n{done.stdout}\n{done.stderr}"
        weights = re.search(r"rails to rank 1 over eth0 \((\d+)/1024\), eth1 \((\d+)/1024\)", done.stdout + done.stderr)
        assert weights, done.stdout + done.stderr
        ratio = int(weights.group(1)) / int(weights.group(2))
        assert 2.5 <= ratio <= 6.0, f"rails weighed {weights.group(0)} for 200 and 50 Mbit/s links"
        print(f"unequal rails weighed {ratio:.2f}:1 (links 4:1)")
        for i in range(2):
            for ns, dev in ((f"chlab-{NAME}-h{i}", "eth1"), (f"chlab-{NAME}-sw", f"p{i}r1")):
                subprocess.run(["ip", "netns", "exec", ns, "tc", "qdisc", "replace", "dev", dev, "root", "handle", "1:",
                                "tbf", "rate", "200mbit", "burst", "64kb", "latency", "10ms"], check=True)

        # One NIC down mid-run: a clear error naming it within seconds, not a hang until the timeout.
        run = subprocess.Popen([sys.executable, lab, "run", path, "--timeout", "120", "--", "env", "CHORUS_TIMEOUT=100",
                                "CHORUS_TRANSPORT=tcp", perf, "allreduce", "-b", "16M", "-e", "16M", "-n", "1000",
                                "-w", "1"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        lines = []
        started = threading.Event()

        def read():
            for line in run.stdout:
                lines.append(line)
                if "out-of-place" in line:
                    started.set()

        reader = threading.Thread(target=read)
        reader.start()
        assert started.wait(60), "".join(lines)
        down_at = time.monotonic()
        subprocess.run(["ip", "netns", "exec", f"chlab-{NAME}-h1", "ip", "link", "set", "eth1", "down"], check=True)
        run.wait(timeout=60)
        took = time.monotonic() - down_at
        reader.join()
        out = "".join(lines)
        assert run.returncode != 0, out
        assert "interface eth1 (rail 2 of 2) is down" in out, out
        assert took < 15, f"{took:.1f} s after the NIC went down:\n{out}"
        print(f"NIC down: both ranks failed {took:.1f} s after")
    finally:
        down = subprocess.run([sys.executable, lab, "down", NAME], capture_output=True, text=True, timeout=60)
        assert down.returncode == 0, down.stderr
assert not lab_namespaces(), f"left behind: {lab_namespaces()}"
print("multi-rail check passed")
