#!/usr/bin/python3
"""What the Python package adds to a call: an 8-byte in-place allreduce on 2 ranks, timed in C (chorus-perf's
in-place column) and in Python, in alternating jobs so that the machine's drift hits both alike; medians of the
rounds, and their spread.

  /usr/bin/python3 perf/python/call_overhead.py [--build build] [--rounds 7] [--iters 20000]
  /usr/bin/python3 perf/python/call_overhead.py --alone     # the Python loops on one rank: no peer to wait for

Each Python job times three loops on one communicator, in turn: chorusAllReduce called through ctypes directly
(what any ctypes binding pays), comm.allreduce(x) (the package: buffer, datatype and op resolved per call), and
comm.allreduce(x, async_op=True).wait() (queued on the host stream, then waited for).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LOOPS = ("ctypes", "package", "async_wait")


def rank_main(iters, alone=False):
    import numpy as np

    import chorus
    from chorus._lib import lib

    with (chorus.Comm(chorus.get_unique_id(), 1, 0) if alone else chorus.Comm.from_env()) as comm:
        x = np.ones(2, np.float32)
        address, handle = x.__array_interface__["data"][0], comm.handle
        calls = {
            "ctypes": lambda: lib.chorusAllReduce(address, address, 2, 8, 0, handle, None),
            "package": lambda: comm.allreduce(x),
            "async_wait": lambda: comm.allreduce(x, async_op=True).wait(),
        }
        times = {}
        for name in LOOPS:
            call = calls[name]
            for _ in range(iters // 20):  # warm-up
                call()
            comm.barrier()
            start = time.perf_counter()
            for _ in range(iters):
                call()
            times[name] = (time.perf_counter() - start) / iters * 1e6
            comm.barrier()
        return times


def run(command):
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout


def c_time(build, iters):
    out = run([f"{build}/launcher/chorusrun", "-n", "2", f"{build}/perf/chorus-perf", "allreduce", "-b", "8", "-e",
               "8", "-n", str(iters), "-w", str(iters // 20), "-c", "0"])
    row = next(line for line in out.splitlines() if line.split() and line.split()[0] == "8")
    return float(row.split()[9])  # the in-place time (us)


def python_times(build, iters):
    env = dict(os.environ, PYTHONPATH=f"{build}/python")
    out = subprocess.run([f"{build}/launcher/chorusrun", "-n", "2", sys.executable, __file__, "--rank",
                          "--iters", str(iters)], check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(HERE, "..", "..", "build"))
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--iters", type=int, default=20000)
    parser.add_argument("--alone", action="store_true", help="time the Python loops on a 1-rank communicator")
    parser.add_argument("--rank", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    build = os.path.abspath(args.build)
    if args.alone:
        sys.path.insert(0, os.path.join(build, "python"))
        rounds = {name: [] for name in LOOPS}
        for _ in range(args.rounds):
            for name, t in rank_main(args.iters, alone=True).items():
                rounds[name].append(t)
        return report(f"8-byte allreduce, 1 rank, {args.iters} calls per round, {args.rounds} rounds (us per call)",
                      rounds, None)
    if args.rank:
        times = rank_main(args.iters)
        if os.environ.get("CHORUS_RANK") == "0":
            print(json.dumps(times))
        return None
    rounds = {"C (chorus-perf)": []} | {name: [] for name in LOOPS}
    for _ in range(args.rounds):
        rounds["C (chorus-perf)"].append(c_time(build, args.iters))
        for name, t in python_times(build, args.iters).items():
            rounds[name].append(t)
    report(f"8-byte in-place allreduce, 2 ranks, {args.iters} calls per round, {args.rounds} rounds (us per call)",
           rounds, statistics.median(rounds["C (chorus-perf)"]))


def report(title, rounds, base):
    print(title)
    print(f"{'':18} {'median':>8} {'min':>8} {'max':>8}" + (f" {'over C':>8}" if base is not None else ""))
    for name, values in rounds.items():
        m = statistics.median(values)
        extra = f" {m - base:+8.2f}" if base is not None else ""
        print(f"{name:18} {m:8.2f} {min(values):8.2f} {max(values):8.2f}{extra}")


if __name__ == "__main__":
    main()
