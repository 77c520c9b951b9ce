#!/usr/bin/env python3
"""chorus-inspect's answer time on a live job of N ranks (tests/flight/flight_worker, the last rank held before a
call so that the others wait in it): asks ROUNDS times and prints the median of the time chorus-inspect reports
(store, cards, every process asked) and of its whole run (process start included). perf/results/flight.md.
  perf/scripts/inspect_answer_time.py BUILD_DIR N [ROUNDS 9]"""
import os
import re
import socket
import statistics
import subprocess
import sys
import time

build, ranks = sys.argv[1], int(sys.argv[2])
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 9
worker = os.path.join(build, "tests", "flight_worker")
inspect = os.path.join(build, "perf", "chorus-inspect")
with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
job = "inspecttime%d" % os.getpid()
procs = []
try:
    for rank in range(ranks):
        env = dict(os.environ, CHORUS_RANK=str(rank), CHORUS_WORLD_SIZE=str(ranks), CHORUS_JOB_ID=job,
                   CHORUS_STORE="127.0.0.1:%d" % port, CHORUS_TRANSPORT="shm")
        procs.append(subprocess.Popen([worker, "stall", str(ranks - 1)], env=env, stdin=subprocess.PIPE,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True))
    reported, whole = [], []
    deadline = time.monotonic() + 120
    pattern = "rank %d is outside Chorus" % (ranks - 1)
    while len(reported) < rounds:
        assert time.monotonic() < deadline, "the job never got to the stall"
        began = time.monotonic()
        out = subprocess.run([inspect, "127.0.0.1:%d" % port, "--job", job], capture_output=True, text=True,
                             timeout=30).stdout
        took = time.monotonic() - began
        if pattern not in out:
            time.sleep(0.2)  # polling until every rank is up and waiting, within the deadline
            continue
        reported.append(float(re.search(r"answered, in ([0-9.]+) s", out).group(1)))
        whole.append(took)
    print(out)
    print("%d ranks: chorus-inspect reports %.3f s (median of %d; min %.3f, max %.3f), whole run %.3f s" %
          (ranks, statistics.median(reported), rounds, min(reported), max(reported), statistics.median(whole)))
finally:
    for p in procs:
        p.kill()
        p.wait()
