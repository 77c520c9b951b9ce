#!/usr/bin/python3
"""Busbw against message size from chorus-perf or chorus-lab results, one line per file and algorithm: measured solid,
predicted (a `predicted_busbw_gbs` column, where a file has one) dashed, size on a log axis. Writes SVG and PNG.

  plot_sweep.py OUT_BASENAME FILE.csv|FILE.json [...] [--title TEXT]

Reads chorus-perf's --csv/--json (the out-of-place busbw) and chorus-lab sweep's sweep.csv/sweep.json (one line per
algorithm). Debian's matplotlib (python3-matplotlib), hence /usr/bin/python3."""

import argparse
import csv
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def rows_of(path):
    if path.endswith(".json"):
        with open(path) as f:
            data = json.load(f)
        return data["results"] if isinstance(data, dict) and "results" in data else data
    with open(path) as f:
        return list(csv.DictReader(f))


def series(path):
    """{label: [(bytes, measured busbw, predicted busbw or None)]} for one file."""
    out = {}
    name = os.path.splitext(os.path.basename(path))[0]
    for r in rows_of(path):
        if "algorithm" in r:
            label = f"{name}: {r['algorithm']}"
            measured = float(r["busbw_gbs"])
        else:
            label = f"{name}: {r.get('collective', '')}".rstrip(": ")
            measured = float(r["oop_busbw_gbs"])
        predicted = r.get("predicted_busbw_gbs")
        predicted = float(predicted) if predicted not in (None, "") else None
        out.setdefault(label, []).append((int(r["bytes"]), measured, predicted))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out")
    parser.add_argument("files", nargs="+")
    parser.add_argument("--title", default="")
    args = parser.parse_args()
    fig, ax = plt.subplots(figsize=(8, 5))
    for path in args.files:
        for label, points in series(path).items():
            points.sort()
            xs = [p[0] for p in points]
            line, = ax.plot(xs, [p[1] for p in points], marker="o", markersize=3, label=label)
            if any(p[2] is not None for p in points):
                pts = [(p[0], p[2]) for p in points if p[2] is not None]
                ax.plot([p[0] for p in pts], [p[1] for p in pts], linestyle="--", color=line.get_color(),
                        label=f"{label} (predicted)")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("busbw (GB/s)")
    ax.grid(True, which="both", alpha=0.3)
    ax.set_title(args.title)
    ax.legend(fontsize=7)
    fig.tight_layout()
    for ext in ("svg", "png"):
        fig.savefig(f"{args.out}.{ext}")
    print(f"plot_sweep: {args.out}.svg, {args.out}.png")


if __name__ == "__main__":
    sys.exit(main())
