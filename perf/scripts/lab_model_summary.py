#!/usr/bin/python3
"""Sums up chorus-lab sweeps against the model's targets: the model's predicted/measured time per algorithm (within
+/-20% from 1 MiB, +/-30% up to 64 KiB), the default selection's time over the best forced algorithm's (at most
1.10), and the default's busbw at the largest size as a share of the link's rate (at least 0.90).

  lab_model_summary.py SWEEP.csv [...]"""

import csv
import os
import sys

SMALL, LARGE = 64 << 10, 1 << 20


def main(paths):
    failures = 0
    print(f"{'sweep':<28} {'algorithm':<19} {'<=64K pred/meas':>16} {'>=1M pred/meas':>15}  within")
    for path in paths:
        rows = list(csv.DictReader(open(path)))
        name = os.path.basename(os.path.dirname(path))
        algos = []
        for r in rows:
            if r["algorithm"] not in algos:
                algos.append(r["algorithm"])
        for a in algos:
            mine = [r for r in rows if r["algorithm"] == a and r["predicted_over_measured"] != ""]
            small = [float(r["predicted_over_measured"]) for r in mine if int(r["bytes"]) <= SMALL]
            large = [float(r["predicted_over_measured"]) for r in mine if int(r["bytes"]) >= LARGE]
            ok_small = all(0.7 <= x <= 1.3 for x in small)
            ok_large = all(0.8 <= x <= 1.2 for x in large)
            span = lambda v: f"{min(v):.2f}..{max(v):.2f}" if v else "-"  # noqa: E731
            verdict = ("yes" if ok_small and ok_large else
                       "large only" if ok_large else "small only" if ok_small else "no")
            shared = " (ranks > cores: small sizes time the scheduler)" if rows[0].get("cores_shared") == "True" else ""
            print(f"{name:<28} {a:<19} {span(small):>16} {span(large):>15}  {verdict}{shared}")
        sizes = sorted({int(r["bytes"]) for r in rows})
        worst, worst_large, worst_choice = (0, 0), (0, 0), (0, 0)
        for b in sizes:
            at = {r["algorithm"]: float(r["time_us"]) for r in rows if int(r["bytes"]) == b}
            forced = [t for a, t in at.items() if a != "default"]
            ran = [r.get("default_ran") for r in rows if int(r["bytes"]) == b and r["algorithm"] == "default"]
            if ran and ran[0] in at and forced:
                # The algorithm the default picked, as its own forced run timed it: the choice without the noise
                # between two communicators running the same algorithm (4x1, 8-512 B: 1.0-1.18x apart).
                worst_choice = max(worst_choice, (at[ran[0]] / min(forced), b))
            if "default" in at and forced:
                worst = max(worst, (at["default"] / min(forced), b))
                if b >= LARGE:
                    worst_large = max(worst_large, (at["default"] / min(forced), b))
        top = [r for r in rows if int(r["bytes"]) == sizes[-1] and r["algorithm"] == "default"]
        link = float(top[0]["link_fraction"]) if top else 0
        failures += worst[0] > 1.10
        choice = f"; its choice forced/best {worst_choice[0]:.2f} (at {worst_choice[1]} B)" if worst_choice[0] else ""
        print(f"{name:<28} default/best forced at worst {worst[0]:.2f} (at {worst[1]} B), from 1 MiB "
              f"{worst_large[0]:.2f}{choice}; default busbw at {sizes[-1] >> 20} MiB = {link:.2f} of the link")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
