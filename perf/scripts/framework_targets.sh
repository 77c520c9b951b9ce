#!/usr/bin/env bash
# The framework-API benchmarks (send/recv, alltoall, fusion), in one sitting, alternating runs, medians:
#   send/recv      2 ranks: one-way 8-byte latency (half a ping-pong) and 64 MiB bandwidth, against Open MPI
#   alltoall       2, 4 and 8 ranks (the last two oversubscribed), every size, against Open MPI (oversub_sweep.sh)
#   fusion         2 ranks over TCP: a group of 64 allreduces of 4 KiB, one allreduce of 256 KiB, 64 ungrouped calls
#   split          splitting 8 ranks in two against an 8-rank init (chorus-split-bench)
#   host streams   enqueue time; an 8-byte allreduce queued on a host stream then an event synchronize, against the
#                  blocking call
#
# Usage: framework_targets.sh PREFIX [PARTS]   (PREFIX: a Chorus install; PARTS: comma list of the parts above,
#        default p2p,alltoall,fusion,split,streams). Environment: ROUNDS (5).
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PREFIX=${1:?usage: framework_targets.sh PREFIX [PARTS]}
PARTS=${2:-p2p,alltoall,fusion,split,streams}
ROUNDS=${ROUNDS:-5}
RUN="$PREFIX/bin/chorusrun"
PERF="$PREFIX/bin/chorus-perf"
median() { sort -g | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "nan"}'; }
# perf N ARGS... -> the out-of-place time (us) of the single size measured
perf_time() {
  local n=$1; shift
  timeout 600 "$RUN" -n "$n" "$PERF" "$@" 2>&1 | awk '$1 ~ /^[0-9]+$/ && NF >= 13 {print $6; exit}'
}
want() { [[ ",$PARTS," == *",$1,"* ]]; }

if want p2p; then
  echo "## send/recv, 2 ranks (pingpong: one-way time; sendrecv: both ways at once)"
  ROUNDS=$ROUNDS SIZES=8,67108864 bash "$HERE/oversub_sweep.sh" "$PREFIX" 2 pingpong,sendrecv | tail -n +2
fi
if want alltoall; then
  for n in 2 4 8; do
    echo "## alltoall, $n ranks"
    sizes=8,64,512,4096,32768,262144,2097152,16777216,67108864
    [ "$n" -gt 2 ] && sizes=1024,8192,65536,524288,4194304,33554432,67108864
    ROUNDS=$((ROUNDS > 3 ? 3 : ROUNDS)) SIZES=$sizes bash "$HERE/oversub_sweep.sh" "$PREFIX" "$n" alltoall | tail -n +2
  done
fi
if want fusion; then
  echo "## fusion, 2 ranks over TCP (us per 64 x 4 KiB; median of $ROUNDS alternating rounds)"
  : > /tmp/ft.g; : > /tmp/ft.o; : > /tmp/ft.u
  for ((k = 0; k < ROUNDS; k++)); do
    CHORUS_TRANSPORT=tcp perf_time 2 allreduce -b 4K -e 4K --group 64 -n 200 -w 20 -c 0 >> /tmp/ft.g
    CHORUS_TRANSPORT=tcp perf_time 2 allreduce -b 256K -e 256K -n 200 -w 20 -c 0 >> /tmp/ft.o
    CHORUS_TRANSPORT=tcp perf_time 2 allreduce -b 4K -e 4K -n 6400 -w 200 -c 0 | awk '{print $1 * 64}' >> /tmp/ft.u
  done
  g=$(median < /tmp/ft.g); o=$(median < /tmp/ft.o); u=$(median < /tmp/ft.u)
  awk -v g="$g" -v o="$o" -v u="$u" 'BEGIN {
    printf "| group of 64 x 4 KiB | one 256 KiB | 64 x 4 KiB ungrouped | group / one | ungrouped / group |\n"
    printf "|---|---|---|---|---|\n| %.1f us | %.1f us | %.1f us | %.2f | %.2f |\n", g, o, u, g / o, u / g }'
fi
if want split; then
  echo "## split, 8 ranks in two"
  "$PREFIX/bin/chorus-split-bench" 8 "$ROUNDS"
  CHORUS_SPLIT_SHARE=0 "$PREFIX/bin/chorus-split-bench" 8 "$ROUNDS" | sed 's/^/CHORUS_SPLIT_SHARE=0: /'
fi
if want streams; then
  echo "## host streams, 2 ranks, 8-byte allreduce (median of $ROUNDS alternating rounds)"
  : > /tmp/ft.b; : > /tmp/ft.e; : > /tmp/ft.q
  for ((k = 0; k < ROUNDS; k++)); do
    perf_time 2 allreduce -b 8 -e 8 -n 20000 -w 1000 -c 0 >> /tmp/ft.b
    perf_time 2 allreduce -b 8 -e 8 -n 20000 -w 1000 -c 0 --stream host-each >> /tmp/ft.e
    timeout 600 "$RUN" -n 2 "$PERF" allreduce -b 8 -e 8 -n 20000 -w 1000 -c 0 --stream host 2>&1 |
      awk '/Avg enqueue time/ {print $6}' >> /tmp/ft.q
  done
  b=$(median < /tmp/ft.b); e=$(median < /tmp/ft.e); q=$(median < /tmp/ft.q)
  awk -v b="$b" -v e="$e" -v q="$q" 'BEGIN {
    printf "| blocking | queued + event synchronize | ratio | enqueue |\n|---|---|---|---|\n"
    printf "| %.2f us | %.2f us | %.2f | %.2f us |\n", b, e, e / b, q }'
fi
