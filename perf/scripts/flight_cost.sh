#!/bin/bash
# The flight recorder's cost on the smallest call: a 2-rank 8-byte allreduce (chorus-perf, out-of-place and in-place
# times) with the recorder on (CHORUS_FLIGHT_RECORDS=2048, the default) and off (0), alternated round by round;
# prints each round and the medians. perf/results/flight.md.
#   perf/scripts/flight_cost.sh BUILD_DIR [ROUNDS 9] [ITERS 20000]
set -euo pipefail
build=${1:?usage: flight_cost.sh BUILD_DIR [ROUNDS] [ITERS]}
rounds=${2:-9}
iters=${3:-20000}
run() {
  CHORUS_FLIGHT_RECORDS=$1 "$build/launcher/chorusrun" -n 2 "$build/perf/chorus-perf" allreduce -b 8 -e 8 \
    -n "$iters" -w 2000 -c 0 | awk '$1 == 8 { print $6, $10 }'
}
on=()
off=()
for ((r = 1; r <= rounds; ++r)); do
  a=$(run 2048)
  b=$(run 0)
  echo "round $r: on (out, in) $a us; off $b us" >&2
  on+=("$a")
  off+=("$b")
done
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for side in on off; do
  declare -n values=$side
  out=$(printf '%s\n' "${values[@]}" | awk '{ print $1 }' | median)
  in=$(printf '%s\n' "${values[@]}" | awk '{ print $2 }' | median)
  echo "median $side: out-of-place $out us, in-place $in us"
done
