#!/usr/bin/env bash
# Is the default selection right on this machine? chorus-perf --algos autotune: the default's communicator
# and an autotuned one (which tries every algorithm per size and keeps the fastest) timed in interleaved rounds, the
# autotuned one warmed up past its trials (40 calls per size). Prints the table, then every size where autotune's
# median beats the default's by more than 10% ("default/autotune > 1.10") with another plan (algorithm and slice):
# each such row says the default is wrong there; "none" when the default holds at every size. A row where autotune
# settled on the default's own plan is shown apart, not counted: the two communicators ran the same calls.
#
# Usage: default_vs_autotune.sh [-t shm|tcp] [-n RANKS] [-b MIN] [-e MAX] [-r ROUNDS] [--build DIR]
#                               [--lab HOSTS --rate RATE [--mtu MTU]]
#   -t, -n         transport (Chorus's default choice, or CHORUS_TRANSPORT=tcp) and ranks, on this machine
#                  (loopback; default shm, 2)
#   -b, -e         sizes, factor 2 (default 8 to 64M)
#   -r ROUNDS      interleaved rounds per size (default 11)
#   --lab HOSTS    run in the topology lab instead (chorus-lab run, root): HOSTS emulated hosts of RANKS/HOSTS
#                  ranks each, every host's link shaped to RATE (tc syntax: 200mbit, 1gbit, 10gbit), MTU (1500)
# Results and what they mean: perf/results/selection.md, "Default against autotune".
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
TRANSPORT=shm RANKS=2 MIN=8 MAX=64M ROUNDS=11 BUILD="$ROOT/build" LAB="" RATE=1gbit MTU=1500
while [ $# -gt 0 ]; do
  case "$1" in
    -t) TRANSPORT=$2; shift 2 ;;
    -n) RANKS=$2; shift 2 ;;
    -b) MIN=$2; shift 2 ;;
    -e) MAX=$2; shift 2 ;;
    -r) ROUNDS=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    --lab) LAB=$2; shift 2 ;;
    --rate) RATE=$2; shift 2 ;;
    --mtu) MTU=$2; shift 2 ;;
    -h | --help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "default_vs_autotune.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$TRANSPORT" in shm | tcp) ;; *) echo "default_vs_autotune.sh: -t is shm or tcp, not $TRANSPORT" >&2; exit 2 ;; esac
perf=("$BUILD/perf/chorus-perf" allreduce -b "$MIN" -e "$MAX" -f 2 -c 0 --algos autotune -n 5 -w 40
  --rounds "$ROUNDS" --min-ms 20)
out=$(mktemp /tmp/chorus-default-vs-autotune-XXXXXX)
trap 'rm -f "$out"' EXIT
if [ -n "$LAB" ]; then
  [ $((RANKS % LAB)) -eq 0 ] || { echo "default_vs_autotune.sh: $RANKS ranks do not split over $LAB hosts" >&2; exit 2; }
  where="lab: $LAB hosts x $((RANKS / LAB)) ranks, $RATE, MTU $MTU"
  "$BUILD/perf/chorus-lab" run --hosts "$LAB" --ranks-per-host $((RANKS / LAB)) --rate "$RATE" --mtu "$MTU" \
    -- "${perf[@]}" | tee "$out"
else
  where="this machine: $RANKS ranks, $TRANSPORT"
  transport=(); [ "$TRANSPORT" = tcp ] && transport=(CHORUS_TRANSPORT=tcp)
  env "${transport[@]}" "$BUILD/launcher/chorusrun" -n "$RANKS" "${perf[@]}" | tee "$out"
fi
# Rows: size, the default's median us, autotune's, ..., then the plans the default and autotune ran last.
python3 - "$out" "$where" <<'PY'
import sys
rows = []
for line in open(sys.argv[1]):
    f = line.split()
    if not f or line.startswith("#") or not f[0].isdigit():
        continue
    plans = tuple(f[-2:]) if len(f) >= 2 and "@" in f[-1] and "@" in f[-2] else ("?", "?")
    rows.append((int(f[0]), float(f[1]), float(f[2]), plans))
print(f"default against autotune, {sys.argv[2]}: {len(rows)} sizes, "
      f"default/autotune {min(d / a for _, d, a, _ in rows):.2f}-{max(d / a for _, d, a, _ in rows):.2f}" if rows else
      f"default against autotune, {sys.argv[2]}: no rows")
if not rows:
    sys.exit(1)
slower = [(b, d, a, p) for b, d, a, p in rows if a > 0 and d / a > 1.10]
# Where autotune settled on the default's own plan, the two communicators ran the same calls: the gap is their
# spread, not a wrong default.
wrong = [r for r in slower if r[3][0] != r[3][1]]
print("sizes where autotune beats the default by more than 10%:", "none" if not wrong else "")
for b, d, a, (dp, ap) in wrong:
    print(f"  {b} B: default {d:.2f} us ({dp}), autotune {a:.2f} us ({ap}) ({d / a:.2f}x)")
for b, d, a, (dp, ap) in slower:
    if dp == ap:
        print(f"  not counted, both ran {dp}: {b} B, default {d:.2f} us, autotune {a:.2f} us ({d / a:.2f}x)")
PY
