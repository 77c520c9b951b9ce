#!/usr/bin/env bash
# Two builds of Chorus alternated: whether a change to the code moved its speed. Each round runs chorus-perf's
# allreduce sweep with the old build, then the new (the order flips every round), for every transport:ranks pair,
# so that the machine's slow and fast moods fall on both alike. builds_ab_report.py gives per size the medians,
# the [min-max] and a verdict (a difference inside both spreads is a tie).
#
# Usage: builds_ab.sh OLD_BUILD NEW_BUILD [-r ROUNDS] [-e MAX] [-c "shm:2 tcp:2 shm:4 tcp:4"] [-o CSV]
#   OLD_BUILD, NEW_BUILD  build trees holding launcher/chorusrun and perf/chorus-perf (the quick start's targets)
#   -r ROUNDS             alternating rounds (default 5)
#   -e MAX                largest size in bytes, K/M suffixes (default 16M; the sweep starts at 8 B, factor 2)
#   -c CONFIGS            transport:ranks pairs (default "shm:2 tcp:2 shm:4 tcp:4")
#   -o CSV                samples (default /tmp/builds_ab.csv); the report goes to standard output
set -uo pipefail
[ $# -ge 2 ] || { sed -n '2,13p' "$0"; exit 2; }
OLD=$1 NEW=$2
shift 2
ROUNDS=5 MAX=16M CONFIGS="shm:2 tcp:2 shm:4 tcp:4" OUT=/tmp/builds_ab.csv
while [ $# -gt 0 ]; do
  case "$1" in
    -r) ROUNDS=$2; shift 2 ;;
    -e) MAX=$2; shift 2 ;;
    -c) CONFIGS=$2; shift 2 ;;
    -o) OUT=$2; shift 2 ;;
    *) echo "builds_ab.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
MAX=$(numfmt --from=iec "$MAX")
for b in "$OLD" "$NEW"; do
  for tool in launcher/chorusrun perf/chorus-perf; do
    [ -x "$b/$tool" ] || { echo "builds_ab.sh: $b/$tool is missing" >&2; exit 1; }
  done
done
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
echo "build,transport,ranks,round,bytes,time_us,busbw_gbs" >"$OUT"
# Bands of sizes, each with calls enough for a timed run of a few hundred milliseconds (as side_by_side.sh).
bands=("8 4096 5000 500" "8192 1048576 500 50" "2097152 8388608 100 10" "16777216 1099511627776 20 5")
run() {  # NAME BUILD TRANSPORT RANKS ROUND
  local name=$1 dir=$2 t=$3 n=$4 round=$5 lo hi iters warm
  for band in "${bands[@]}"; do
    read -r lo hi iters warm <<<"$band"
    hi=$((hi < MAX ? hi : MAX))
    [ "$lo" -le "$hi" ] || continue
    local env=()
    [ "$t" = tcp ] && env=(CHORUS_TRANSPORT=tcp)
    env "${env[@]}" timeout 300 "$dir/launcher/chorusrun" -n "$n" "$dir/perf/chorus-perf" allreduce -b "$lo" -e "$hi" \
      -f 2 -c 0 -n "$iters" -w "$warm" --csv "$TMP/c.csv" >/dev/null 2>&1 ||
      echo "builds_ab.sh: $name $t $n ranks from $lo B failed" >&2
    [ -f "$TMP/c.csv" ] && awk -F, -v b="$name" -v t="$t" -v n="$n" -v r="$round" \
      'NR > 1 {print b "," t "," n "," r "," $3 "," $8 "," $10}' "$TMP/c.csv" >>"$OUT"
    rm -f "$TMP/c.csv"
  done
}
for ((r = 1; r <= ROUNDS; r++)); do
  for cfg in $CONFIGS; do
    t=${cfg%%:*} n=${cfg##*:}
    if ((r % 2)); then
      run old "$OLD" "$t" "$n" "$r"; run new "$NEW" "$t" "$n" "$r"
    else
      run new "$NEW" "$t" "$n" "$r"; run old "$OLD" "$t" "$n" "$r"
    fi
  done
  echo "builds_ab.sh: round $r of $ROUNDS done (load $(cut -d' ' -f1 /proc/loadavg))" >&2
done
python3 "$(dirname "$0")/builds_ab_report.py" "$OUT"
