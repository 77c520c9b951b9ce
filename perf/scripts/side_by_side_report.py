#!/usr/bin/env python3
"""side_by_side.sh's report: per size, each library's median and spread over the alternating rounds, and a verdict.

Judged on medians, decided only outside the noise: Chorus is "ahead" (or "behind") of the best peer at a size when
its middle runs (the second to the second-to-last of the sorted rounds) all lie above (below) the peer's; when the
two overlap the difference is inside the spread and the size is a "tie". Up to 4 KiB the judged figure is the time
(lower is better), above it the bus bandwidth. A size is "bimodal" when its sorted runs split into two groups more
than 1.5x apart with at least two runs in each; a "cliff" when Chorus's median busbw falls below 0.8x the previous
size's.

Usage: side_by_side_report.py SAMPLES.csv [--title TEXT] [--csv OUT.csv]
"""
import argparse
import csv
import statistics
import sys
from collections import defaultdict

LATENCY_BYTES = 4096  # up to here calls are judged on time, above on bus bandwidth
BIMODAL_GAP = 1.5
CLIFF = 0.8


def human(n):
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return str(n)


def middle(values):
    """The runs between the extremes (all of them below 5 runs): what the verdict compares."""
    v = sorted(values)
    return v[1:-1] if len(v) >= 5 else v


def bimodal(values):
    v = sorted(x for x in values if x > 0)
    for i in range(2, len(v) - 1):
        if v[i] > BIMODAL_GAP * v[i - 1]:
            return True
    return False


def verdict(chorus, peer, higher_is_better):
    c, p = middle(chorus), middle(peer)
    if not c or not p:
        return "missing"
    if higher_is_better:
        if min(c) > max(p):
            return "ahead"
        if max(c) < min(p):
            return "behind"
    else:
        if max(c) < min(p):
            return "ahead"
        if min(c) > max(p):
            return "behind"
    return "tie"


def fmt(values, digits):
    if not values:
        return "-"
    return f"{statistics.median(values):.{digits}f} [{min(values):.{digits}f}-{max(values):.{digits}f}]"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("samples")
    ap.add_argument("--title", default="allreduce")
    ap.add_argument("--csv", help="also write one row per size (medians, ratio, verdict) to this file")
    args = ap.parse_args()

    runs = defaultdict(lambda: defaultdict(list))  # runs[lib][bytes] = [(time, busbw)]
    with open(args.samples) as f:
        for row in csv.DictReader(f):
            try:
                runs[row["lib"]][int(row["bytes"])].append((float(row["time_us"]), float(row["busbw_gbs"])))
            except ValueError:
                continue
    if "chorus" not in runs:
        sys.exit("side_by_side_report.py: no Chorus samples in " + args.samples)
    peers = sorted(lib for lib in runs if lib != "chorus")
    sizes = sorted(runs["chorus"])

    print(f"### {args.title}\n")
    print("Medians of alternating rounds, [min-max]; time in us up to 4 KiB, else busbw in GB/s. Verdict against the "
          "best peer at that size (by median).\n")
    header = ["bytes", "rounds", "chorus"] + peers + ["best peer", "ratio", "verdict", "notes"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    table, previous, counts = [], None, defaultdict(int)
    for size in sizes:
        latency = size <= LATENCY_BYTES
        pick = (lambda r: r[0]) if latency else (lambda r: r[1])
        digits = 2 if latency else 2
        c = [pick(r) for r in runs["chorus"][size]]
        cells, best, best_values = [], None, None
        for lib in peers:
            v = [pick(r) for r in runs[lib].get(size, [])]
            cells.append(fmt(v, digits))
            if not v:
                continue
            better = best is None or (statistics.median(v) < statistics.median(best_values) if latency
                                      else statistics.median(v) > statistics.median(best_values))
            if better:
                best, best_values = lib, v
        notes = []
        if bimodal(c):
            notes.append("chorus bimodal")
        if best_values and bimodal(best_values):
            notes.append(f"{best} bimodal")
        busbw = statistics.median(r[1] for r in runs["chorus"][size])
        if previous is not None and previous > 0 and busbw < CLIFF * previous:
            notes.append(f"cliff: busbw {busbw:.2f} < {CLIFF}x {previous:.2f}")
        previous = busbw
        if best_values:
            ratio = (statistics.median(best_values) / statistics.median(c) if latency
                     else statistics.median(c) / statistics.median(best_values))
            v = verdict(c, best_values, not latency)
        else:
            ratio, v = float("nan"), "missing"
        counts[v] += 1
        print(f"| {human(size)} | {len(c)} | {fmt(c, digits)} | " + " | ".join(cells) +
              f" | {best or '-'} | {ratio:.2f}x | {v} | {'; '.join(notes)} |")
        table.append([size, len(c), statistics.median(c), best or "", ratio, v, "; ".join(notes)])
    print("\n" + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) + " (ratio > 1: Chorus better)")
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["bytes", "rounds", "chorus_median", "best_peer", "ratio", "verdict", "notes"])
            w.writerows(table)


if __name__ == "__main__":
    main()
