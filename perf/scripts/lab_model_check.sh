#!/bin/bash
# The cost model against the topology lab (docs/cost_model.md, "Checked against the lab"): for each shape (2x1, 4x1, 2x2 at 1 Gbit/s) and each of
# allreduce, broadcast, reduce, allgather and reduce-scatter, a chorus-lab sweep of the default selection and every
# algorithm of that collective, 8 B to 16 MiB; then lab_model_summary.py prints predicted/measured per algorithm,
# the default's worst ratio to the best forced algorithm, and the busbw at 16 MiB as a share of the link.
# Usage (root): perf/scripts/lab_model_check.sh [BUILD_DIR] [OUT_DIR] [SHAPES] [COLLECTIVES] [ROUNDS] [JOBS]
# ROUNDS (default 4): despite its name, the calls per algorithm in each of chorus-perf's 10 --algos rounds (its -n;
# a run also lasts at least the sweep's --min-ms, so it counts only where calls are long). The rounds go in the orders
# of a Williams design, the median kept. With 2, the default and the very algorithm it chose came out up to 1.19x
# apart (4x1, 4 KiB).
# JOBS (default 5): the sizes up to 64 KiB are measured in this many jobs and each row's median kept (chorus-lab
# sweep --jobs): in one job, two communicators of the same algorithm kept up to 8% apart at 64-512 B
# (perf/results/cost_model_lab.md, "How far one check is from the next"). Figures: perf/results/cost_model_lab.md.
set -euo pipefail
build=${1:-build}
out=${2:-/tmp/chorus-lab-model}
shapes=${3:-"two_hosts four_hosts two_by_two"}
collectives=${4:-"allreduce broadcast reduce allgather reducescatter"}
rounds=${5:-4}
jobs=${6:-5}
here=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
# The sweep compares the default with every algorithm the cost model prices for the shape (its default --algos).
for shape in $shapes; do
  for c in $collectives; do
    echo "== $c on $shape" >&2
    "$build/perf/chorus-lab" sweep "$here/perf/labs/$shape.json" --timeout 900 --collective "$c" \
      -b 8 -e 16M -f 8 -n "$rounds" --jobs "$jobs" --out "$out/$c-$shape" >"$out/$c-$shape.log" 2>&1 ||
      { echo "sweep failed: $out/$c-$shape.log" >&2; tail -5 "$out/$c-$shape.log" >&2; }
  done
done
/usr/bin/python3 "$here/perf/scripts/lab_model_summary.py" "$out"/*/sweep.csv
