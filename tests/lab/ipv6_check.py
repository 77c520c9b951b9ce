"""IPv6-only hosts in the lab (root): 2 hosts x 2 ranks whose namespaces have no IPv4 address at all (lo's
127.0.0.1 removed too) run an allreduce over TCP, the store named "[fd00:77::1]:port"; then an allgather over the ib transport (the
software verbs device: its out-of-band channel and RoCE GIDs) with nothing but link-local addresses (fe80::/64, the
store "[fe80::1%eth0]:port", each rank dialling through its own eth0). chorus-perf checks
every result; the logs show which addresses the ranks listened on. Nothing of the lab is left after. Skipped (77)
without root, network namespaces or a kernel with IPv6.
Usage: ipv6_check.py BUILD_DIR"""

import json
import os
import subprocess
import sys
import tempfile

from lab_check_support import lab_cleaned_after, lab_namespaces, perf_rows, require_lab

build = sys.argv[1]
lab = os.path.join(build, "perf", "chorus-lab")
perf = os.path.join(build, "perf", "chorus-perf")

require_lab(perf)
if not os.path.isdir("/proc/sys/net/ipv6"):
    print("the kernel has no IPv6 (no /proc/sys/net/ipv6: built without it or booted ipv6.disable=1): skipped")
    sys.exit(77)

# Each rank first proves its namespace has no IPv4 address, then runs the collective.
NO_IPV4 = 'if ip -4 -o addr show | grep -q inet; then echo "IPv4 address here:"; ip -4 -o addr show; exit 3; fi'


def run(lab_file, addresses, collective, transport):
    cmd = [sys.executable, lab, "run", lab_file, "--addresses", addresses, "--timeout", "60", "--", "sh", "-c",
           f'{NO_IPV4}; exec "$@"', "rank", perf, collective, "-b", "1M", "-e", "4M", "-f", "4", "-n", "1", "-w", "0"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, CHORUS_DEBUG="INFO", CHORUS_TRANSPORT=transport,
                                   CHORUS_IB_EMULATION="1" if transport == "ib" else "0"))
    assert done.returncode == 0, f"{addresses} {collective}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    rows = perf_rows(done.stdout)
    assert [int(r[0]) for r in rows] == [1 << 20, 4 << 20], done.stdout
    for r in rows:
        assert r[8] == "0" and r[12] == "0", f"{addresses} {collective}: wrong results: {r}"
    # What the closing note quotes: where the store and rank 0 listened, and the rows.
    for line in done.stderr.splitlines():
        if "[0] chorus INFO" in line and ("listening on" in line or "communicator ready" in line):
            print(f"{addresses}: {line.split('chorus INFO ', 1)[1]}")
    print("\n".join(f"{addresses} {collective}: {' '.join(r)}" for r in rows))
    return done.stderr


with tempfile.TemporaryDirectory(prefix="chorus-ipv6-") as d, lab_cleaned_after(lab):
    path = os.path.join(d, "v6.json")
    with open(path, "w") as f:
        json.dump({"format": "chorus-lab/1", "name": "ci-ipv6", "hosts": 2, "ranks_per_host": 2,
                   "link": {"rate": "2gbit", "latency_us": 30}, "addresses": "ipv6"}, f)
    logs = run(path, "ipv6", "allreduce", "tcp")
    # The store and every rank's listener on the ULA addresses (IPv6 in brackets), none on IPv4.
    assert "store server listening on [::]:29411" in logs and "store [fd00:77::1]:29411" in logs, logs[-3000:]
    for host in ("fd00:77::1", "fd00:77::2"):
        assert f"tcp transport listening on eth0 [{host}]:" in logs, logs[-3000:]
    assert "10.77." not in logs and "127.0.0.1" not in logs, logs[-3000:]
    assert not lab_namespaces(), f"left behind: {lab_namespaces()}"

    logs = run(path, "ipv6-link-local", "allgather", "ib")
    for host in ("fe80::1%eth0", "fe80::2%eth0"):
        assert f"ib.oob transport listening on eth0 [{host}]:" in logs, logs[-3000:]
    assert "RoCE gid 3 (fe800000000000000000000000000001)" in logs, logs[-3000:]
    assert "fd00:" not in logs, logs[-3000:]
assert not lab_namespaces(), f"left behind: {lab_namespaces()}"
print("ipv6 check passed")
