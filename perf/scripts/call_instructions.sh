#!/usr/bin/env bash
# Instructions one allreduce costs rank 0, counted by callgrind: a measure of the call's own software path that
# this machine's moods cannot move (the same build gives the same count within 0.3% in a sitting, 2% across
# sittings). Rank 0 runs under callgrind, counting only inside chorusAllReduce; the other ranks run natively, so
# rank 0's partner's data is mostly there when it looks and its waits add little. Prints the instructions per call, then the functions that cost the most.
#
# Usage: call_instructions.sh [-n RANKS] [-b BYTES] [-i ITERS] [--build DIR] [--top N]
#   -n RANKS       ranks (default 2)
#   -b BYTES       allreduce size (default 8)
#   -i ITERS       timed calls per mode (default 20000); chorus-perf runs them out of place and in place, each
#                  after 100 warm-up calls
#   --build DIR    Chorus's build tree (default ./build)
#   --top N        functions to list, by their own instructions (default 25)
# Needs valgrind (apt-get install valgrind).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
RANKS=2 BYTES=8 ITERS=20000 BUILD="$ROOT/build" TOP=25
while [ $# -gt 0 ]; do
  case "$1" in
    -n) RANKS=$2; shift 2 ;;
    -b) BYTES=$2; shift 2 ;;
    -i) ITERS=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    --top) TOP=$2; shift 2 ;;
    -h | --help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "call_instructions.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
command -v valgrind >/dev/null || { echo "call_instructions.sh: valgrind is missing (apt-get install valgrind)" >&2; exit 1; }
for tool in "$BUILD/launcher/chorusrun" "$BUILD/perf/chorus-perf"; do
  [ -x "$tool" ] || { echo "call_instructions.sh: $tool is missing: build Chorus first (--build DIR)" >&2; exit 1; }
done
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
cat >"$TMP/rank.sh" <<EOF
#!/bin/sh
if [ "\$CHORUS_RANK" = 0 ]; then
  exec valgrind --tool=callgrind --callgrind-out-file=$TMP/callgrind.out --toggle-collect=chorusAllReduce "\$@" 2>$TMP/valgrind.log
fi
exec "\$@"
EOF
chmod +x "$TMP/rank.sh"
CHORUS_TIMEOUT=600 timeout 900 "$BUILD/launcher/chorusrun" -n "$RANKS" "$TMP/rank.sh" "$BUILD/perf/chorus-perf" allreduce \
  -b "$BYTES" -e "$BYTES" -n "$ITERS" -w 100 -c 0 >"$TMP/perf.log" 2>&1 \
  || { echo "call_instructions.sh: the job failed:" >&2; tail -20 "$TMP/perf.log" >&2; exit 1; }
calls=$((2 * (ITERS + 100)))
callgrind_annotate "$TMP/callgrind.out" >"$TMP/annotated.txt" 2>/dev/null
total=$(awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1; exit}' "$TMP/annotated.txt")
echo "allreduce of $BYTES bytes, $RANKS ranks: $((total / calls)) instructions a call on rank 0 ($total over $calls calls)"
echo "per call  function (its own instructions)"
awk -v calls="$calls" -v top="$TOP" '/^ *[0-9,]+ \( *[0-9.]+%\) +[^ ]/ && !/PROGRAM TOTALS/ {
    n = $1; gsub(",", "", n); line = $0
    sub(/^ *[0-9,]+ \( *[0-9.]+%\) +/, "", line); sub(/ \[[^]]*\]$/, "", line); sub(/^[^:]*:/, "", line)
    if (shown++ < top) printf "%8.0f  %s\n", n / calls, substr(line, 1, 110)
  }' "$TMP/annotated.txt"
