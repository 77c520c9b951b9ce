#!/usr/bin/python3
"""Re-prices recorded chorus-lab sweeps with a build's cost model, for changing the model without the lab: each
sweep's measured times stand, its cluster.json (the links the lab measured) goes to that build's chorus-topo
--predict, and it prints per shape how many rows come within the model's bands (+/-30% up to 64 KiB, +/-20% from 1
MiB), the default's row priced as the algorithm the model now picks (as the sweep priced it), and, for shapes of
more than one rank per host or more than two hosts, the worst forced/best of the algorithm the model would pick. The
default's row holds only where the change moves no selection; the picks' forced rows hold either way.

  lab_model_reprice.py BUILD_DIR CHECK_DIR [-v]     (CHECK_DIR: lab_model_check.sh's OUT_DIR; -v lists the misses)"""

import collections
import csv
import glob
import json
import os
import subprocess
import sys

SMALL, LARGE = 64 << 10, 1 << 20


def predictions(topo, cluster, ranks, collective, sizes):
    """{(bytes, algorithm): us} and {bytes: the selector's pick} from chorus-topo --predict."""
    out = subprocess.run([topo, "--predict", cluster, "--ranks", str(ranks), "--collective", collective,
                          "--sizes", ",".join(map(str, sizes)), "--json"], capture_output=True, text=True, check=True)
    priced, picks = {}, {}
    for row in json.loads(out.stdout)["predictions"]:
        picks[row["bytes"]] = row["selected"]
        for algorithm, us in row["algorithms"].items():
            priced[(row["bytes"], algorithm)] = us
    return priced, picks


def main(build, check, verbose):
    topo = os.path.join(build, "perf", "chorus-topo")
    in_band, total = collections.Counter(), collections.Counter()
    misses, choices = [], []
    for path in sorted(glob.glob(os.path.join(check, "*", "sweep.csv"))):
        rows = list(csv.DictReader(open(path)))
        if not rows:
            continue
        name = os.path.basename(os.path.dirname(path))
        hosts, per_host = int(rows[0]["hosts"]), int(rows[0]["ranks_per_host"])
        shape = f"{hosts}x{per_host}"
        sizes = sorted({int(r["bytes"]) for r in rows})
        priced, picks = predictions(topo, os.path.join(os.path.dirname(path), "cluster.json"), hosts * per_host,
                                    rows[0]["collective"], sizes)
        measured = collections.defaultdict(dict)
        for r in rows:
            b, us, algorithm = int(r["bytes"]), float(r["time_us"]), r["algorithm"]
            if algorithm != "default":
                measured[b][algorithm] = us
            price = priced.get((b, picks.get(b) if algorithm == "default" else algorithm))
            if price is None or SMALL < b < LARGE:
                continue
            size_class, band = ("<=64K", 0.3) if b <= SMALL else (">=1M", 0.2)
            total[(shape, size_class)] += 1
            if abs(price / us - 1) <= band:
                in_band[(shape, size_class)] += 1
            else:
                misses.append(f"  {name} {b} {algorithm}: measured {us:g} us, priced {price:.1f} ({price / us:.2f})")
        if per_host > 1 or hosts > 2:
            for b, times in measured.items():
                if picks.get(b) in times:
                    choices.append((times[picks[b]] / min(times.values()), f"{name} {b} B: {picks[b]}"))
    for key in sorted(total):
        print(f"{key[0]:>5} {key[1]:>6}: {in_band[key]}/{total[key]} rows in band")
    if choices:
        worst = max(choices)
        print(f"the model's pick, forced, over the best forced at worst: {worst[0]:.3f} ({worst[1]})")
    if verbose and misses:
        print("out of band:\n" + "\n".join(misses))


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "-v"]
    if len(args) != 2:
        sys.exit(__doc__)
    main(args[0], args[1], "-v" in sys.argv[1:])
