"""What containers do to a job (root): a 64 MiB /dev/shm (Docker's default), and a hostname that resolves to
127.0.0.1.
1. small /dev/shm: in a mount namespace with a 64 MiB tmpfs on /dev/shm, 4 ranks (chorusrun) run 64 MiB
   allreduces, checked by chorus-perf: rings asked larger than fit (CHORUS_SHM_BUFFER=16M) shrink; a /dev/shm
   another tenant has filled sends the host's pairs over TCP. Each time exactly one warning line, naming /dev/shm's
   size and what was done, and no other complaint.
2. hostname -> 127.0.0.1: 2 lab hosts x 2 ranks, each rank in its own UTS and mount namespace whose /etc/hosts maps
   its hostname (the same on both hosts, as containers from one image have) to 127.0.0.1, CHORUS_HOST_ID unset. The
   ranks advertise their lab interface's address, and the two network namespaces of this one machine (same host
   name, same boot id) never use shared memory between them; ranks of one namespace do.
Skipped (77) without root, unshare/mount or network namespaces.
Usage: containers_check.py BUILD_DIR CHORUSRUN CHORUS_PERF"""

import json
import os
import re
import subprocess
import sys
import tempfile

from lab_check_support import lab_cleaned_after, lab_namespaces, perf_rows, require_lab

build, chorusrun, perf = sys.argv[1:4]
lab = os.path.join(build, "perf", "chorus-lab")

require_lab(perf)
probe = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                        "mount -t tmpfs -o size=1m tmpfs /dev/shm"], capture_output=True, text=True)
if probe.returncode != 0:
    print(f"mount namespaces with a tmpfs unavailable ({probe.stderr.strip()}): skipped")
    sys.exit(77)


def check_rows(stdout, what):
    rows = perf_rows(stdout)
    assert rows and all(r[8] == "0" and r[12] == "0" for r in rows), f"{what}: wrong or no results:\n{stdout}"
    return rows


def small_dev_shm(prepare, env):
    """4 ranks, 64 MiB allreduces, under a 64 MiB /dev/shm that `prepare` (shell) may fill first."""
    script = ("mount -t tmpfs -o size=64m tmpfs /dev/shm && " + prepare +
              ' && exec "$@"')
    cmd = ["unshare", "-m", "--propagation", "private", "sh", "-c", script, "job", chorusrun, "-n", "4",
           "--timeout", "60", perf, "allreduce", "-b", "64M", "-e", "64M", "-n", "1", "-w", "0"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=90, env=dict(os.environ, **env))
    what = f"small /dev/shm ({prepare}, {env})"
    assert done.returncode == 0, f"{what}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    check_rows(done.stdout, what)
    warnings = [line for line in done.stderr.splitlines() if " chorus WARN " in line]
    errors = [line for line in done.stderr.splitlines() if "error" in line.lower()]
    assert not errors, f"{what}: " + "\n".join(errors)
    assert len(warnings) == 1, f"{what}: {len(warnings)} warning lines, not 1:\n" + "\n".join(warnings)
    assert "/dev/shm (64 MiB, " in warnings[0], warnings[0]
    return warnings[0]


env = {"CHORUS_DEBUG": "WARN"}
shrunk = small_dev_shm("true", dict(env, CHORUS_SHM_BUFFER="16M"))
assert re.search(r"using \d+ KiB rings", shrunk), shrunk
print("small /dev/shm, rings too large:", shrunk.split("chorus WARN ", 1)[-1])
full = small_dev_shm("head -c 63m /dev/zero > /dev/shm/other-tenant", env)
assert "talk over TCP instead" in full, full
print("small /dev/shm, filled by another tenant:", full.split("chorus WARN ", 1)[-1])

# 2. The same hostname on both lab hosts, resolving to 127.0.0.1 in each rank's own /etc/hosts. The lab file names
# the link's latency, so that the lab does not measure it first.
with tempfile.TemporaryDirectory(prefix="chorus-containers-") as d, lab_cleaned_after(lab):
    lab_file = os.path.join(d, "lab.json")
    with open(lab_file, "w") as f:
        json.dump({"format": "chorus-lab/1", "name": "ci-containers", "hosts": 2, "ranks_per_host": 2,
                   "link": {"rate": "2gbit", "latency_us": 30}}, f)
    hosts = os.path.join(d, "hosts")
    with open(hosts, "w") as f:
        f.write("127.0.0.1 localhost\n127.0.0.1 chorus-node\n")
    inner = (f"hostname chorus-node && mount --bind {hosts} /etc/hosts && "
             "getent hosts chorus-node | grep -q '^127.0.0.1' || exit 4; exec \"$@\"")
    cmd = [sys.executable, lab, "run", lab_file, "--timeout", "60", "--", "env", "-u", "CHORUS_HOST_ID", "unshare", "--uts", "--mount", "--propagation", "private", "sh", "-c",
           inner, "rank", perf, "allreduce", "-b", "1M", "-e", "1M", "-n", "1", "-w", "0"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=dict(os.environ, CHORUS_DEBUG="INFO"))
    assert done.returncode == 0, f"hostname -> 127.0.0.1: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    check_rows(done.stdout, "hostname -> 127.0.0.1")
    logs = done.stderr
    for host in ("10.77.0.1", "10.77.0.2"):
        assert f"tcp transport listening on eth0 {host}:" in logs, logs[-3000:]
    assert "127.0.0.1" not in logs, [line for line in logs.splitlines() if "127.0.0.1" in line]
    # Ranks 0, 1 on host 0 and 2, 3 on host 1: shared memory within a namespace, TCP across.
    via = {}
    for m in re.finditer(r"\[(\d+)\] chorus INFO peer (\d+) via (\w+)", logs):
        via[(int(m.group(1)), int(m.group(2)))] = m.group(3)
    want = {(a, b): ("shm" if a // 2 == b // 2 else "tcp") for a in range(4) for b in range(4) if a != b}
    assert via == want, f"transports by pair {via}, expected {want}\n{logs[-3000:]}"
    print("hostname -> 127.0.0.1, CHORUS_HOST_ID unset:", ", ".join(f"{a}-{b} {via[(a, b)]}" for a, b in sorted(via)
                                                                    if a < b))
    print("\n".join(line.split("chorus INFO ", 1)[1] for line in logs.splitlines()
                    if "chorus INFO tcp transport listening" in line))
assert not lab_namespaces(), f"left behind: {lab_namespaces()}"
print("containers check passed")
