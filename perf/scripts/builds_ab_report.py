#!/usr/bin/env python3
"""The report of builds_ab.sh: per transport, ranks and size, each build's median and [min-max], new against old.

Up to 4 KiB the figure is the time in microseconds (lower is better), above it the bus bandwidth in GB/s. "speed"
is new's speed over old's (above 1: new is faster). A difference is a verdict only when the two builds' ranges do
not overlap; otherwise it is a tie.
"""
import csv
import statistics
import sys
from collections import defaultdict

LATENCY_BYTES = 4096


def main(path):
    samples = defaultdict(list)
    for row in csv.DictReader(open(path)):
        size = int(row["bytes"])
        value = float(row["time_us"]) if size <= LATENCY_BYTES else float(row["busbw_gbs"])
        samples[(row["transport"], int(row["ranks"]), size, row["build"])].append(value)
    shown = None
    for transport, ranks, size in sorted({k[:3] for k in samples}):
        old, new = samples.get((transport, ranks, size, "old")), samples.get((transport, ranks, size, "new"))
        if not old or not new:
            continue
        if (transport, ranks) != shown:
            shown = (transport, ranks)
            print(f"\n### {transport}, {ranks} ranks (up to {LATENCY_BYTES} B: time in us; above: busbw in GB/s)\n")
            print("| bytes | old median [min-max] | new median [min-max] | speed new/old | verdict |")
            print("|---:|---|---|---:|---|")
        mo, mn = statistics.median(old), statistics.median(new)
        speed = mo / mn if size <= LATENCY_BYTES else mn / mo
        overlap = not (max(old) < min(new) or max(new) < min(old))
        verdict = "tie" if overlap else ("new faster" if speed > 1 else "new slower")
        print(f"| {size} | {mo:.3g} [{min(old):.3g}-{max(old):.3g}] | {mn:.3g} [{min(new):.3g}-{max(new):.3g}] "
              f"| {speed:.2f} | {verdict} |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/builds_ab.csv")
