"""chorus-topo --predict: cluster files parse (or are refused naming the field), predictions for 8 to 16k ranks come
in under a second, the selector's pick is among the priced algorithms, busbw never beats the links, and the model
sees what the lab measures: ranks of a host share its NIC, racks share an uplink.
Usage: predict_check.py BUILD_DIR SOURCE_DIR"""

import json
import os
import subprocess
import sys
import tempfile
import time

topo = os.path.join(sys.argv[1], "perf", "chorus-topo")
clusters = os.path.join(sys.argv[2], "perf", "clusters")
if not os.path.exists(topo):
    print(f"{topo} is not built here (sanitizer builds leave the tools out): skipped")
    sys.exit(77)


def predict(path, *args):
    start = time.monotonic()
    done = subprocess.run([topo, "--predict", path, "--json", *args], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["predictions"], time.monotonic() - start


for name in sorted(os.listdir(clusters)):
    path = os.path.join(clusters, name)
    rows, seconds = predict(path, "--collective", "all")
    assert seconds < 1.0, f"{name}: {seconds:.2f} s"
    assert sorted({r["ranks"] for r in rows}) == [8 << i for i in range(12)], name
    with open(path) as f:
        c = json.load(f)
    # A ring crosses each host boundary once per direction: busbw at most the narrower of the two links.
    link = min(c.get("intra_host", {"bandwidth_gbs": 1e9})["bandwidth_gbs"],
               c["nic"]["bandwidth_gbs"] * c.get("nics_per_host", 1))
    for r in rows:
        assert r["selected"] in r["algorithms"], r
        if r["collective"] == "allreduce" and r["hosts"] > 1:
            assert r["busbw_gbs"][r["selected"]] <= 1.01 * link, (name, r)


def write(doc):
    f = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
    json.dump(doc, f)
    f.close()
    return f.name


base = {"format": "chorus-cluster/1", "ranks_per_host": 2, "cores_per_host": 2,
        "nic": {"latency_us": 25, "bandwidth_gbs": 0.125}}
# 2 hosts x 2 ranks at 1 Gbit/s (the lab's shape): halving-doubling sends both ranks' halves across at once, so it
# is the slowest at 16 MiB, ring next, the two-level algorithm (one flow per host) the fastest.
rows, _ = predict(write(base), "--ranks", "4", "--sizes", "16M")
us = rows[0]["algorithms"]
assert us["hierarchical"] < us["ring"] < us["halving_doubling"], us
assert 1.2 < us["halving_doubling"] / us["hierarchical"] < 2.2, us
# Racks whose uplinks are oversubscribed 4:1 slow halving-doubling across them; the ring crosses each uplink once.
flat = dict(base, ranks_per_host=1)
racks = dict(flat, fabric={"hosts_per_rack": 4, "oversubscription": 4})
one, _ = predict(write(flat), "--ranks", "16", "--sizes", "64M")
four, _ = predict(write(racks), "--ranks", "16", "--sizes", "64M")
assert four[0]["algorithms"]["halving_doubling"] > 2 * one[0]["algorithms"]["halving_doubling"], (one, four)
assert abs(four[0]["algorithms"]["ring"] / one[0]["algorithms"]["ring"] - 1) < 0.01, (one, four)
# Hosts on half a core each (emulated hosts sharing a machine's cores): a chain's calls back to back relay at half the
# pace, and a recursive-doubling step waits for the scheduler.
small = dict(flat, context_switch_us=20)
whole, _ = predict(write(small), "--ranks", "4", "--sizes", "8", "--collective", "broadcast")
half, _ = predict(write(dict(small, cores_per_host=0.5)), "--ranks", "4", "--sizes", "8", "--collective", "broadcast")
assert abs(half[0]["algorithms"]["chain"] / whole[0]["algorithms"]["chain"] - 2) < 0.01, (whole, half)

for broken, words in (({"format": "chorus-cluster/1"}, "ranks_per_host: missing"),
                      (dict(base, nic={"latency_us": 1}), "nic.bandwidth_gbs: missing"),
                      (dict(base, fabric={"hosts_per_rack": 4}), "oversubscription or uplink_gbs"),
                      (dict(base, speed=1), "unknown field 'speed'"), ({"format": "x"}, "format"),
                      (dict(base, cores_per_host=0), "cores_per_host")):
    done = subprocess.run([topo, "--predict", write(broken)], capture_output=True, text=True)
    assert done.returncode == 1 and words in done.stderr and len(done.stderr.strip().splitlines()) == 1, \
        (broken, done.stderr)
print("predict check passed")
