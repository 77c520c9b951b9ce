#!/usr/bin/env bash
# Chorus against Open MPI (shared-memory default, --oversubscribe) for every collective at N ranks, alternating
# runs, medians: the issue's "4 and 8 ranks on the 2 cores" comparison.
#
# Usage: oversub_sweep.sh PREFIX N [COLLS]
#   PREFIX  a Chorus install (PREFIX/bin/chorusrun, PREFIX/bin/chorus-perf)
#   N       ranks
#   COLLS   comma list, default allreduce,broadcast,reduce,allgather,reducescatter; also alltoall, alltoallv,
#           gather, scatter, sendrecv, pingpong, barrier (barrier: one row, size 0)
# Environment: ROUNDS (3), SIZES (8,1024,65536,1048576,16777216,67108864 bytes; nccl-tests sizes, i.e. the total
#   for allgather and reduce-scatter), CHORUS_ENV (extra env for the Chorus runs).
# Open MPI's allreduce/broadcast/reduce come from ../shared/peers/mpi_bench.c, allgather/reduce-scatter from
# perf/peers/mpi_gather_bench.c, the framework calls from perf/peers/mpi_framework_bench.c (same method and CSV). Prints one markdown row per collective and size: median
# time of each, chorus/mpi time ratio (the issue's bound: <= 1.5) and chorus/mpi busbw ratio.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PREFIX=${1:?usage: oversub_sweep.sh PREFIX N [COLLS]}
N=${2:?usage: oversub_sweep.sh PREFIX N [COLLS]}
COLLS=${3:-allreduce,broadcast,reduce,allgather,reducescatter}
ROUNDS=${ROUNDS:-3}
SIZES=${SIZES:-8,1024,65536,1048576,16777216,67108864}
PEERS="$HERE/../../../shared/peers"
BUILD=${BUILD_DIR:-/tmp/chorus-peers/build}
mkdir -p "$BUILD"
[ -x "$BUILD/mpi_bench" ] || mpicc -O2 -o "$BUILD/mpi_bench" "$PEERS/mpi_bench.c" -lm || exit 1
[ -x "$BUILD/mpi_gather_bench" ] || mpicc -O2 -o "$BUILD/mpi_gather_bench" "$HERE/../peers/mpi_gather_bench.c" -lm || exit 1
# Rebuilt every time: cheap, and a stale binary would measure an older method.
mpicc -O2 -o "$BUILD/mpi_framework_bench" "$HERE/../peers/mpi_framework_bench.c" -lm || exit 1
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "nan"}'; }

chorus() {  # coll size -> "time busbw" (out-of-place)
  local it=20; [ "$2" -le 65536 ] && it=2000
  env ${CHORUS_ENV:-} timeout 600 "$PREFIX/bin/chorusrun" -n "$N" "$PREFIX/bin/chorus-perf" "$1" -b "$2" -e "$2" \
    -n $it -c 0 2>&1 | awk -v s="$2" '$1 == s && NF >= 13 {print $6, $8; exit}'
}
mpi() {  # coll size -> "time busbw"
  local bench=mpi_bench
  case $1 in
    allgather|reducescatter) bench=mpi_gather_bench ;;
    alltoall|alltoallv|gather|scatter|sendrecv|pingpong|barrier) bench=mpi_framework_bench ;;
  esac
  timeout 600 mpirun --allow-run-as-root --oversubscribe -np "$N" "$BUILD/$bench" --config shm-default \
    --csv "$TMP/m.csv" --colls "$1" --sizes "$2" --target-ms 300 >/dev/null 2>&1
  awk -F, -v s="$2" 'NR > 1 && $6 == s {print $7, $9; exit}' "$TMP/m.csv"; rm -f "$TMP/m.csv"
}

echo "$N ranks on $(nproc) cores, median of $ROUNDS alternating rounds"
echo "| collective | bytes | chorus us | mpi us | time chorus/mpi | busbw chorus/mpi |"
echo "|---|---|---|---|---|---|"
for coll in ${COLLS//,/ }; do
  sizes=$SIZES; [ "$coll" = barrier ] && sizes=0
  for s in ${sizes//,/ }; do
    : > "$TMP/c"; : > "$TMP/m"
    for ((k = 0; k < ROUNDS; k++)); do
      chorus "$coll" "$s" >> "$TMP/c"
      mpi "$coll" "$s" >> "$TMP/m"
    done
    ct=$(awk '{print $1}' "$TMP/c" | median); cb=$(awk '{print $2}' "$TMP/c" | median)
    mt=$(awk '{print $1}' "$TMP/m" | median); mb=$(awk '{print $2}' "$TMP/m" | median)
    awk -v c="$coll" -v s="$s" -v ct="$ct" -v mt="$mt" -v cb="$cb" -v mb="$mb" 'BEGIN {
      printf "| %s | %d | %.1f | %.1f | %.2f | %s |\n", c, s, ct, mt, (mt > 0 ? ct / mt : 0),
             (mb > 0 ? sprintf("%.2f", cb / mb) : "-") }'
  done
done
