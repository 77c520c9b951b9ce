"""Traces from a real job: chorusrun runs chorus-perf on 3 ranks over 2 emulated hosts with CHORUS_TRACE at the
transfer level; every rank's file must parse and hold one event per call with the right fields, alike on every rank;
chorus-trace merge and summary must work on the directory. Usage: trace_run_check.py BUILD_DIR"""

import json
import os
import subprocess
import sys
import tempfile

build = sys.argv[1]
chorusrun = os.path.join(build, "launcher", "chorusrun")
perf = os.path.join(build, "perf", "chorus-perf")
tool = os.path.join(build, "perf", "chorus-trace")
SIZES = [8, 256, 8192, 262144]
if not os.path.exists(perf):
    print(f"{perf} is not built here (sanitizer builds make the test binaries only): skipped")
    sys.exit(77)


def run(cmd, env=None):
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return done.stdout


with tempfile.TemporaryDirectory(prefix="chorus-trace-check-") as tmp:
    traces = os.path.join(tmp, "traces")  # made by the library
    env = dict(os.environ, CHORUS_TRACE=traces, CHORUS_TRACE_LEVEL="transfer")
    run([chorusrun, "-n", "3", "--hosts", "2", "--timeout", "150", perf, "allreduce", "-b", "8", "-e", "256K",
         "-f", "32", "-n", "3", "-w", "1"], env)
    files = sorted(os.listdir(traces))
    assert files == ["chorus-trace-0.json", "chorus-trace-1.json", "chorus-trace-2.json"], files
    sequences = []
    links = set()
    for rank, name in enumerate(files):
        with open(os.path.join(traces, name)) as f:
            trace = json.load(f)
        assert trace["otherData"]["chorus"]["rank"] == rank
        assert trace["otherData"]["chorus"]["clock_offset_us"] == 0  # one machine: one clock
        calls = [e for e in trace["traceEvents"] if e.get("cat") == "call"]
        transfers = [e for e in trace["traceEvents"] if e.get("cat") == "transfer"]
        for e in calls + transfers:
            assert e["ph"] == "X" and e["pid"] == rank and e["dur"] >= 0, e
        for e in calls:
            args = e["args"]
            for field in ("seq", "bytes", "count", "datatype", "algorithm", "chunk", "wait_us", "move_us", "reduce_us"):
                assert field in args, (field, e)
            parts = args["wait_us"] + args["move_us"] + args["reduce_us"]
            assert parts <= e["dur"] * 1.01 + 1, e  # the split never adds up to more than the call
        seqs = [e["args"]["seq"] for e in calls]
        assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs), seqs
        starts = [e["ts"] for e in calls]
        assert starts == sorted(starts), "calls out of order"
        sizes = {e["args"]["bytes"] for e in calls if e["args"]["datatype"] == "float32"}
        assert set(SIZES) <= sizes, sizes
        assert transfers, "no transfer events"
        for e in transfers:  # one peer's step names its link; a wait for several peers (peer -1) none
            assert e["args"]["transport"] in (("shm", "tcp") if e["args"]["peer"] >= 0 else ("",)), e
        links.update(e["args"]["transport"] for e in transfers)
        sequences.append([(e["name"], e["args"]["bytes"], e["args"]["algorithm"]) for e in calls])
    assert sequences[0] == sequences[1] == sequences[2], "ranks traced different calls"
    assert {"shm", "tcp"} <= links, links  # ranks of a host over shared memory, the 2 emulated hosts over TCP

    merged = os.path.join(tmp, "merged.json")
    run([sys.executable, tool, "merge", traces, "-o", merged])
    with open(merged) as f:
        events = json.load(f)["traceEvents"]
    timed = [e for e in events if e.get("ph") == "X"]
    assert {e["pid"] for e in timed} == {0, 1, 2}
    assert min(e["ts"] for e in timed) == 0

    table = run([sys.executable, tool, "summary", traces]).splitlines()
    assert table[0].split()[:3] == ["comm", "collective", "bytes"], table[0]
    rows = [line.split() for line in table[1:]]
    for size in ("8", "256", "8K", "256K"):
        row = next(r for r in rows if r[1] == "allreduce" and r[2] == size)
        assert all(float(v) >= 0 for v in row[6:10]), row
        assert abs(sum(float(v) for v in row[6:10]) - 100) < 1, row
print("trace check passed")
