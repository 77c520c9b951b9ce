#!/usr/bin/env bash
# What CHORUS_METRICS_PORT costs a 2-rank 8-byte allreduce: chorus-perf without and with it, alternated, ROUNDS
# rounds (7 by default), each job ITERS timed calls (out of place); prints every round's time per call and the medians.
# Usage: perf/scripts/metrics_cost.sh BUILD_DIR [ROUNDS] [ITERS] [PORT]
set -euo pipefail
build=$(cd "$1" && pwd)
rounds=${2:-7}
iters=${3:-20000}
port=${4:-19400}
tmp=$(mktemp -d /tmp/chorus-metrics-cost.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
run() {  # $1: off|on; prints the time per call in us
  local json=$tmp/$1.json
  if [[ $1 == on ]]; then
    CHORUS_METRICS_PORT=$port "$build/launcher/chorusrun" -n 2 --timeout 120 "$build/perf/chorus-perf" allreduce \
      -b 8 -e 8 -n "$iters" -w 1000 -c 0 --json "$json" >/dev/null
  else
    env -u CHORUS_METRICS_PORT "$build/launcher/chorusrun" -n 2 --timeout 120 "$build/perf/chorus-perf" allreduce \
      -b 8 -e 8 -n "$iters" -w 1000 -c 0 --json "$json" >/dev/null
  fi
  python3 -c "import json,sys; r=json.load(open(sys.argv[1]))[0]; print(r['oop_time_us'])" "$json"
}
off=() on=()
for ((i = 0; i < rounds; ++i)); do
  off+=("$(run off)")
  on+=("$(run on)")
  echo "round $i: off ${off[-1]} us, on ${on[-1]} us"
done
python3 - "${off[*]}" "${on[*]}" <<'PY'
import statistics, sys
off = [float(x) for x in sys.argv[1].split()]
on = [float(x) for x in sys.argv[2].split()]
mo, mn = statistics.median(off), statistics.median(on)
print("median off %.3f us, on %.3f us, difference %+.3f us (%+.1f%%)" % (mo, mn, mn - mo, 100 * (mn - mo) / mo))
PY
