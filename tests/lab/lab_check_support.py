"""What the lab checks (lab_run_check.py, multirail_check.py) share: the lab's namespaces as `ip netns` lists them,
and the skip (exit 77) where the lab cannot run."""

import contextlib
import os
import subprocess
import sys


def lab_namespaces():
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.startswith("chlab")]


def perf_rows(stdout):
    """chorus-perf's result rows (a size first), split into columns: #wrong out of place is [8], in place [12]."""
    return [line.split() for line in stdout.splitlines() if line.strip() and line.split()[0].isdigit()]


@contextlib.contextmanager
def lab_cleaned_after(lab):
    """`chorus-lab clean --all` after the block however it ends: a lab killed by a check's own timeout cannot remove
    its namespaces itself."""
    try:
        yield
    finally:
        if lab_namespaces():
            subprocess.run([sys.executable, lab, "clean", "--all"], capture_output=True, timeout=60)


def require_lab(perf):
    """Exits 77 (skipped) without root, chorus-perf or network namespaces; asserts no lab is left from before."""
    if os.geteuid() != 0 or not os.path.exists(perf):
        print("needs root and chorus-perf: skipped")
        sys.exit(77)
    probe = subprocess.run(["ip", "netns", "add", "chlabprobe"], capture_output=True, text=True)
    if probe.returncode != 0:
        print(f"network namespaces unavailable ({probe.stderr.strip()}): skipped")
        sys.exit(77)
    subprocess.run(["ip", "netns", "del", "chlabprobe"])
    assert not lab_namespaces(), f"leftovers before the test: {lab_namespaces()}"
