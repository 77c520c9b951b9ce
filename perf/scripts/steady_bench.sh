#!/usr/bin/env bash
# The TCP steadiness check: JOBS jobs of a 2-rank 64 MiB TCP allreduce (`chorusrun -n 2 chorus-perf allreduce
# -b 64M -e 64M -n 20 -w 5`, chorusrun's default binding unless CHORUSRUN_ARGS says otherwise), each followed by
# `iperf3 --bidir` on loopback for 2 s, the loopback ceiling of the same sitting. Prints each job, then the max/min of
# the jobs' busbw (target <= 1.15) and their median against iperf3's median per direction (target >= 95%).
#   perf/scripts/steady_bench.sh BUILD_DIR [JOBS]    (default 10)
# Environment: CHORUSRUN_ARGS (e.g. "--bind-to none"), GLOO_BENCH (a gloo_bench binary from shared/peers: then a
# Gloo ring_chunked job of the same size runs after each, as a measure of the machine's own drift).
set -euo pipefail
build=${1:?usage: steady_bench.sh BUILD_DIR [JOBS]}
jobs=${2:-10}
command -v iperf3 >/dev/null || { echo "steady_bench: needs iperf3 (scripts/install-deps.sh installs it)" >&2; exit 1; }
work=$(mktemp -d /tmp/chorus-steady-bench-XXXXXX)
trap 'rm -rf "$work"' EXIT
port=$((20000 + RANDOM % 20000))
for ((j = 1; j <= jobs; ++j)); do
  # shellcheck disable=SC2086  # CHORUSRUN_ARGS is a list of options
  busbw=$(CHORUS_TRANSPORT=tcp timeout 300 "$build/launcher/chorusrun" -n 2 ${CHORUSRUN_ARGS:-} -- \
    "$build/perf/chorus-perf" allreduce -b 64M -e 64M -n 20 -w 5 | awk '/^ +[0-9]/ {print $8}')
  gloo=-
  if [ -n "${GLOO_BENCH:-}" ]; then
    store=$(mktemp -d -p "$work")
    for r in 0 1; do
      timeout 300 "$GLOO_BENCH" --rank $r --size 2 --store "$store" --config tcp-lo --csv "$work/gloo.csv" \
        --colls allreduce --algos ring_chunked --sizes 67108864 --target-ms 800 >/dev/null 2>&1 &
    done
    wait
    gloo=$(awk -F, '$6 == 67108864 {print $9; exit}' "$work/gloo.csv")
    rm -f "$work/gloo.csv"
  fi
  timeout 30 iperf3 -s -1 -p "$port" >/dev/null 2>&1 &
  server=$!
  iperf=-
  for _ in 1 2 3 4 5 6 7 8 9 10; do  # the server listens within milliseconds; retry the client until it does
    iperf3 -c 127.0.0.1 -p "$port" --bidir -t 2 -J >"$work/iperf.json" 2>/dev/null || true
    # A client that found no server yet still writes JSON, with "error" and no sums.
    if iperf=$(python3 -c 'import json, sys
end = json.load(open(sys.argv[1])).get("end", {})
if "sum_sent" not in end: sys.exit(1)
print(round((end["sum_sent"]["bits_per_second"] + end["sum_sent_bidir_reverse"]["bits_per_second"]) / 16e9, 3))' \
      "$work/iperf.json"); then
      break
    fi
    iperf=-
    sleep 0.2
  done
  wait "$server" 2>/dev/null || true
  echo "job $j chorus ${busbw} GB/s gloo ${gloo} GB/s iperf3-per-direction ${iperf} GB/s"
  echo "$busbw $gloo $iperf" >>"$work/runs"
done
python3 - "$work/runs" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
def spread(name, values):
    values = [float(v) for v in values if v != "-"]
    if values:
        print(f"{name}: {min(values):.2f}-{max(values):.2f} GB/s, max/min {max(values) / min(values):.2f}, "
              f"median {statistics.median(values):.2f}")
    return statistics.median(values) if values else None
chorus = spread("chorus", [r[0] for r in rows])
spread("gloo ring_chunked", [r[1] for r in rows])
ceiling = spread("iperf3 --bidir per direction", [r[2] for r in rows])
if chorus and ceiling:
    print(f"chorus median / iperf3 median per direction: {chorus / ceiling:.2f} (target >= 0.95); "
          "max/min target <= 1.15")
PY
