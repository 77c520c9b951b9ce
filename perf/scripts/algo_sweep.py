#!/usr/bin/env python3
"""Default selection against every forced algorithm, side by side, same sitting.

Usage: algo_sweep.py PREFIX RANKS [--coll allreduce] [--algos ring,tree,...] [--rounds 3] [--hosts H]
Runs PREFIX/bin/chorusrun -n RANKS PREFIX/bin/chorus-perf COLL over 8 B .. 64 MiB once per algorithm per round
(rounds alternate algorithms, so drift hits them alike), keeps the median out-of-place time per size, and prints a
markdown table: each algorithm's time, the best forced one, and default / best (the selection target is <= 1.10).
"""
import argparse
import os
import statistics
import subprocess
import sys

SMALL = (8, 65536, 5000)       # -b, -e, iterations: latency-bound sizes need many iterations
LARGE = (262144, 67108864, 30)


def run(prefix, ranks, coll, algo, hosts, lo, hi, iters):
    env = dict(os.environ)
    env.pop("CHORUS_ALGO", None)
    if algo != "default":
        env["CHORUS_ALGO"] = algo
    cmd = [f"{prefix}/bin/chorusrun", "-n", str(ranks)]
    if hosts:
        cmd += ["--hosts", str(hosts)]
    cmd += [f"{prefix}/bin/chorus-perf", coll, "-b", str(lo), "-e", str(hi), "-f", "4", "-n", str(iters), "-c", "0"]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} (CHORUS_ALGO={algo}) failed:\n{out.stdout}\n{out.stderr}")
    times = {}
    for line in out.stdout.splitlines():
        f = line.split()
        if len(f) >= 13 and f[0].isdigit():
            times[int(f[0])] = float(f[5])
    return times


def main():
    p = argparse.ArgumentParser()
    p.add_argument("prefix")
    p.add_argument("ranks", type=int)
    p.add_argument("--coll", default="allreduce")
    p.add_argument("--algos", default="ring,recursive_doubling,tree,halving_doubling")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--hosts", type=int, default=0)
    a = p.parse_args()
    algos = ["default"] + a.algos.split(",")
    samples = {}
    for k in range(a.rounds):
        for algo in algos[k % len(algos):] + algos[:k % len(algos)]:  # rotated: no algorithm always runs first
            for lo, hi, iters in (SMALL, LARGE):
                for size, t in run(a.prefix, a.ranks, a.coll, algo, a.hosts, lo, hi, iters).items():
                    samples.setdefault((algo, size), []).append(t)
    sizes = sorted({s for (_, s) in samples})
    print(f"{a.coll}, {a.ranks} ranks{f', {a.hosts} hosts' if a.hosts else ''}: median of {a.rounds} rounds, "
          "out-of-place time in us")
    print("| bytes | " + " | ".join(algos) + " | best forced | default / best |")
    print("|---" * (len(algos) + 3) + "|")
    worst = 0.0
    for s in sizes:
        med = {algo: statistics.median(samples[(algo, s)]) for algo in algos if (algo, s) in samples}
        forced = {k: v for k, v in med.items() if k != "default"}
        best = min(forced, key=forced.get)
        ratio = med["default"] / forced[best]
        worst = max(worst, ratio)
        print(f"| {s} | " + " | ".join(f"{med.get(x, float('nan')):.1f}" for x in algos) +
              f" | {best} | {ratio:.2f} |")
    print(f"\nworst default / best: {worst:.2f}")


if __name__ == "__main__":
    main()
