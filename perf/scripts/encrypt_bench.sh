#!/usr/bin/env bash
# Encryption on the wire against the same runs without it (target: at least 0.6x): 2 ranks over TCP,
# allreduce of SIZE, CHORUS_ENCRYPT=0 and =1 alternated ROUNDS times; prints each run, the medians of busbw and
# their ratio.
#   perf/scripts/encrypt_bench.sh BUILD_DIR [SIZE] [ROUNDS]    (default 64M, 5)
set -euo pipefail
build=${1:?usage: encrypt_bench.sh BUILD_DIR [SIZE] [ROUNDS]}
size=${2:-64M}
rounds=${3:-5}
out=$(mktemp /tmp/chorus-encrypt-bench-XXXXXX)
trap 'rm -f "$out"' EXIT
for ((r = 1; r <= rounds; ++r)); do
  for e in 0 1; do
    busbw=$(CHORUS_TRANSPORT=tcp CHORUS_ENCRYPT=$e timeout 300 "$build/launcher/chorusrun" -n 2 -- \
      "$build/perf/chorus-perf" allreduce -b "$size" -e "$size" -n 20 -w 5 | awk '/^ +[0-9]/ {print $8}')
    echo "round $r encrypt=$e busbw ${busbw} GB/s"
    echo "$e $busbw" >> "$out"
  done
done
python3 - "$out" <<'PY'
import statistics, sys
runs = {"0": [], "1": []}
for line in open(sys.argv[1]):
    e, busbw = line.split()
    runs[e].append(float(busbw))
plain, sealed = statistics.median(runs["0"]), statistics.median(runs["1"])
print(f"median busbw: plain {plain:.2f} GB/s, encrypted {sealed:.2f} GB/s, ratio {sealed / plain:.2f} (target >= 0.6)")
PY
