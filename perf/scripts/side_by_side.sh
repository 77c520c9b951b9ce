#!/usr/bin/env bash
# Chorus against its peers (Open MPI, Gloo's best algorithm), allreduce, every size of a sweep, judged on medians
# of alternating rounds: each round runs Chorus, then every peer, over the whole sweep, so that the machine's slow
# and fast moods fall on all of them alike. The report (side_by_side_report.py) gives per size each library's
# median and spread, marks bimodal sizes and cliffs, and says ahead, behind or tie (a difference inside the spread).
#
# Usage: side_by_side.sh [-n RANKS] [-t shm|tcp] [-b MIN] [-e MAX] [-r ROUNDS] [-o DIR] [--build DIR]
#   -n RANKS       ranks (default 2; more than the cores oversubscribe every library alike)
#   -t TRANSPORT   shm (default): Chorus's default choice, Open MPI's shared memory; tcp: CHORUS_TRANSPORT=tcp,
#                  Open MPI's tcp btl on loopback. Gloo runs over loopback TCP either way (it has no shared memory).
#   -b, -e         smallest and largest size in bytes, K/M suffixes (default 8 to 256M), factor 2
#   -r ROUNDS      alternating rounds (default 7)
#   -o DIR         where samples.csv and report.md go (default /tmp/side_by_side/TRANSPORT-RANKS)
#   --build DIR    Chorus's build tree (default ./build): DIR/launcher/chorusrun, DIR/perf/chorus-perf
# Environment: PEERS_DIR (default ../shared/peers beside the repository: gloo_bench.cc, mpi_bench.c), CHORUS_ENV
#   (more environment for the Chorus runs). The peers need libgloo-dev, libopenmpi-dev and openmpi-bin.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
RANKS=2 TRANSPORT=shm MIN=8 MAX=256M ROUNDS=7 OUT="" BUILD="$ROOT/build"
while [ $# -gt 0 ]; do
  case "$1" in
    -n) RANKS=$2; shift 2 ;;
    -t) TRANSPORT=$2; shift 2 ;;
    -b) MIN=$2; shift 2 ;;
    -e) MAX=$2; shift 2 ;;
    -r) ROUNDS=$2; shift 2 ;;
    -o) OUT=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    -h | --help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "side_by_side.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$TRANSPORT" in shm | tcp) ;; *) echo "side_by_side.sh: -t is shm or tcp, not $TRANSPORT" >&2; exit 2 ;; esac
bytes() { numfmt --from=iec "$1"; }
MIN=$(bytes "$MIN") MAX=$(bytes "$MAX")
OUT=${OUT:-/tmp/side_by_side/$TRANSPORT-$RANKS}
PEERS_DIR=${PEERS_DIR:-$ROOT/../shared/peers}
mkdir -p "$OUT/bin"
for tool in "$BUILD/launcher/chorusrun" "$BUILD/perf/chorus-perf"; do
  [ -x "$tool" ] || { echo "side_by_side.sh: $tool is missing: build Chorus first (--build DIR)" >&2; exit 1; }
done
[ -x "$OUT/bin/gloo_bench" ] || g++ -O2 -std=c++17 -o "$OUT/bin/gloo_bench" "$PEERS_DIR/gloo_bench.cc" -lgloo -pthread \
  || { echo "side_by_side.sh: cannot build gloo_bench from $PEERS_DIR (apt-get install libgloo-dev)" >&2; exit 1; }
[ -x "$OUT/bin/mpi_bench" ] || mpicc -O2 -o "$OUT/bin/mpi_bench" "$PEERS_DIR/mpi_bench.c" -lm \
  || { echo "side_by_side.sh: cannot build mpi_bench from $PEERS_DIR (apt-get install libopenmpi-dev openmpi-bin)" >&2; exit 1; }

SIZES=() s=$MIN
while [ "$s" -le "$MAX" ]; do SIZES+=("$s"); s=$((s * 2)); done
SIZE_LIST=$(IFS=,; echo "${SIZES[*]}")
SAMPLES="$OUT/samples.csv" TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
echo "lib,round,bytes,time_us,busbw_gbs" >"$SAMPLES"

# Chorus: one chorus-perf job per band of sizes, each with calls enough for a timed run like the peers': up to
# 4 KiB as mpi_bench times its sizes (300 ms, at most 100000 calls: chorus-perf --min-ms, --max-iters), above it
# fixed counts that last as long.
chorus() {
  local round=$1 lo hi iters warm ms
  local bands=("8 4096 1000 2000 300" "8192 1048576 500 50 0" "2097152 8388608 100 10 0" "16777216 1099511627776 20 5 0")
  for band in "${bands[@]}"; do
    read -r lo hi iters warm ms <<<"$band"
    lo=$((lo > MIN ? lo : MIN)) hi=$((hi < MAX ? hi : MAX))
    [ "$lo" -le "$hi" ] || continue
    local transport=(); [ "$TRANSPORT" = tcp ] && transport=(CHORUS_TRANSPORT=tcp)
    env "${transport[@]}" ${CHORUS_ENV:-} timeout 600 "$BUILD/launcher/chorusrun" -n "$RANKS" "$BUILD/perf/chorus-perf" \
      allreduce -b "$lo" -e "$hi" -f 2 -c 0 -n "$iters" -w "$warm" --min-ms "$ms" --max-iters 100000 --csv "$TMP/c.csv" \
      >/dev/null 2>&1 || true
    [ -f "$TMP/c.csv" ] && awk -F, -v r="$round" 'NR > 1 {print "chorus," r "," $3 "," $8 "," $10}' "$TMP/c.csv" >>"$SAMPLES"
    rm -f "$TMP/c.csv"
  done
}
gloo() {  # Gloo's best algorithm per size (its bench runs each of them for 300 ms)
  local round=$1 store pids=() r
  store=$(mktemp -d -p "$TMP")
  for ((r = 0; r < RANKS; r++)); do
    timeout 1200 "$OUT/bin/gloo_bench" --rank $r --size "$RANKS" --store "$store" --config tcp-lo --csv "$TMP/g.csv" \
      --colls allreduce --sizes "$SIZE_LIST" --target-ms 300 >/dev/null 2>&1 &
    pids+=($!)
  done
  wait "${pids[@]}" || true
  [ -f "$TMP/g.csv" ] && awk -F, -v r="$round" 'NR > 1 && $4 == "allreduce" {
      if (!($6 in best) || $9 > best[$6]) {best[$6] = $9; t[$6] = $7}
    } END {for (s in best) print "gloo," r "," s "," t[s] "," best[s]}' "$TMP/g.csv" >>"$SAMPLES"
  rm -f "$TMP/g.csv"
}
mpi() {
  local round=$1 config=shm-default extra=()
  if [ "$TRANSPORT" = tcp ]; then
    config=tcp-lo extra=(--mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo)
  fi
  timeout 1200 mpirun --allow-run-as-root --oversubscribe -np "$RANKS" "${extra[@]}" "$OUT/bin/mpi_bench" \
    --config $config --csv "$TMP/m.csv" --colls allreduce --sizes "$SIZE_LIST" --target-ms 300 >/dev/null 2>&1 || true
  [ -f "$TMP/m.csv" ] && awk -F, -v r="$round" 'NR > 1 && $4 == "allreduce" {print "mpi," r "," $6 "," $7 "," $9}' \
    "$TMP/m.csv" >>"$SAMPLES"
  rm -f "$TMP/m.csv"
}

for ((round = 1; round <= ROUNDS; round++)); do
  echo "round $round of $ROUNDS: chorus, gloo, mpi ($TRANSPORT, $RANKS ranks, ${#SIZES[@]} sizes)" >&2
  chorus "$round"
  gloo "$round"
  mpi "$round"
done
python3 "$ROOT/perf/scripts/side_by_side_report.py" "$SAMPLES" --title "allreduce, $RANKS ranks, $TRANSPORT" \
  | tee "$OUT/report.md"
