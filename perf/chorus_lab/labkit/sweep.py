"""chorus-lab sweep: chorus-perf --algos in a lab (the default selection against each forced algorithm, calls
interleaved), measured beside the cost model's prediction for the same world, as CSV, JSON and a plot."""

import csv
import json
import math
import os
import subprocess

from . import plan
from .spec import LabError

# busbw per algbw, as nccl-tests count it.
BUS_FACTOR = {"allreduce": lambda n: 2 * (n - 1) / n, "reducescatter": lambda n: (n - 1) / n,
              "allgather": lambda n: (n - 1) / n, "alltoall": lambda n: (n - 1) / n,
              "broadcast": lambda n: 1.0, "reduce": lambda n: 1.0}


def steady_run_ms(spec):
    """How long each algorithm's run of calls lasts (chorus-perf --min-ms): ten times what the links' token bucket
    (plan.tbf_burst) takes to refill, so that the run times the pace an application repeating the call keeps, not
    the burst the bucket saved up while other algorithms ran (measured: a 2-host 4 KiB recursive-doubling
    allreduce timed 22 us in runs of 5 calls between other algorithms' runs, faster than 1 Gbit/s can carry its 4
    KiB). At least 2 ms."""
    return max(2, math.ceil(10 * plan.tbf_burst(spec.rate_bps) * 8 / spec.rate_bps * 1e3))


def parse_algos_table(text):
    """[(bytes, algorithm, time_us)] from chorus-perf --algos output."""
    names, rows = None, []
    for line in text.splitlines():
        if line.startswith("#") and "size (B)" in line:
            cols = line.lstrip("#").split()
            names = cols[2:cols.index("best")]  # after "size (B)", up to "best forced"
            continue
        fields = line.split()
        if names and fields and fields[0].isdigit():
            for name, value in zip(names, fields[1:1 + len(names)]):
                rows.append((int(fields[0]), name, float(value)))
    if not rows:
        raise LabError("chorus-perf printed no --algos table:\n" + text[-2000:])
    return rows


# The sizes `--jobs` measures again, each in jobs of its own: the small range, where calls take tens of us.
SMALL_BYTES = 64 * 1024


def parse_size(text):
    """Bytes from chorus-perf's size syntax (8, 64K, 16M, 1G: powers of 1024)."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    t = text.strip().upper()
    try:
        return int(float(t[:-1]) * units[t[-1]]) if t and t[-1] in units else int(t)
    except ValueError:
        raise LabError(f"not a size: {text!r} (8, 64K, 16M, 1G)") from None


def median_rows(tables):
    """Several jobs' --algos tables ([(bytes, algorithm, time_us)] each) as one: each (bytes, algorithm)'s median
    over the jobs that timed it (of an even count, the mean of the middle two), in the first table's order.
    Why jobs and not more rounds: at 2 hosts x 2 and 64-512 B, two communicators running the same algorithm in one
    job kept 0.92-1.08 apart over 8 rounds, and ring and hierarchical traded places from one job to the next
    (perf/results/selection.md, "How `chorus-perf --algos` measures"): each job's communicators carry a bias of
    their own that rounds do not average."""
    times, order = {}, []
    for rows in tables:
        for nbytes, algo, t in rows:
            if (nbytes, algo) not in times:
                order.append((nbytes, algo))
            times.setdefault((nbytes, algo), []).append(t)
    out = []
    for key in order:
        v = sorted(times[key])
        mid = len(v) // 2
        out.append((key[0], key[1], v[mid] if len(v) % 2 else round((v[mid - 1] + v[mid]) / 2, 2)))
    return out


def busbw_gbs(collective, nranks, nbytes, us):
    return nbytes / (us * 1e-6) * BUS_FACTOR.get(collective, lambda n: 1.0)(nranks) / 1e9


def results_of(table, lab, collective, predicted, chosen=None):
    """The sweep's rows from the --algos table (parse_algos_table, median_rows); `chosen` ({bytes: algorithm}, as the
    ranks' model picked it) names, on the default's rows, the algorithm the default selection ran."""
    spec = lab.spec
    out = []
    for nbytes, algo, t in table:
        if nbytes == 0:
            continue  # a size chorus-perf rounded down to no element per rank
        busbw = busbw_gbs(collective, spec.nranks, nbytes, t)
        pred = predicted.get((nbytes, algo))
        row = {"collective": collective, "hosts": len(spec.hosts), "ranks_per_host": max(h.ranks for h in spec.hosts),
               "rate_bps": spec.rate_bps, "bytes": nbytes, "algorithm": algo, "time_us": t,
               "busbw_gbs": round(busbw, 6), "link_fraction": round(busbw * 8e9 / spec.rate_bps, 4),
               "predicted_us": round(pred, 2) if pred else "",
               "predicted_busbw_gbs": round(busbw_gbs(collective, spec.nranks, nbytes, pred), 6) if pred else "",
               "predicted_over_measured": round(pred / t, 3) if pred else "",
               "default_ran": (chosen or {}).get(nbytes, "") if algo == "default" else "",
               "cpu_limited": lab.cpu_limited(),
               # More ranks than this machine has cores: the emulated hosts share them, so a small message's time is
               # the scheduler's as much as the link's.
               "cores_shared": spec.nranks > (os.cpu_count() or 1)}
        out.append(row)
    return out


def write_results(out_dir, lab, collective, results, jobs=1):
    with open(os.path.join(out_dir, "sweep.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(results[0]))
        w.writeheader()
        w.writerows(results)
    from .net import spec_to_dict
    with open(os.path.join(out_dir, "sweep.json"), "w") as f:
        json.dump({"lab": dict(spec_to_dict(lab.spec), collective=collective, small_size_jobs=jobs,
                               unshaped_capacity_bps=lab.capacity and lab.capacity * 8,
                               measured_latency_us=lab.latency_us,
                               model_figures_before_and_after=lab.figures_before_after), "results": results}, f,
                  indent=1)


def plot(tools_dir, out_dir, title):
    script = os.path.join(tools_dir, "chorus-plot-sweep")
    if os.path.exists(script):
        subprocess.run([script, os.path.join(out_dir, "sweep"), os.path.join(out_dir, "sweep.csv"), "--title", title],
                       check=False)


def summary(results):
    """One line per algorithm: the range of predicted/measured, and the worst default/best forced."""
    lines, by_algo = [], {}
    for r in results:
        if r["predicted_over_measured"] != "":
            by_algo.setdefault(r["algorithm"], []).append(r["predicted_over_measured"])
    for algo, ratios in by_algo.items():
        lines.append(f"  {algo:>18}: predicted/measured {min(ratios):.2f}..{max(ratios):.2f}")
    sizes = sorted({r["bytes"] for r in results})
    worst = None
    for b in sizes:
        rows = [r for r in results if r["bytes"] == b]
        default = [r["time_us"] for r in rows if r["algorithm"] == "default"]
        forced = [r["time_us"] for r in rows if r["algorithm"] != "default"]
        if default and forced:
            ratio = default[0] / min(forced)
            if worst is None or ratio > worst[0]:
                worst = (ratio, b)
    if worst:
        lines.append(f"  default/best forced at worst {worst[0]:.2f} (at {worst[1]} bytes)")
    return "\n".join(lines)
