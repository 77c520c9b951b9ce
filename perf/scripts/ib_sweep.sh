#!/usr/bin/env bash
# ib_sweep.sh: the ib transport against TCP (and, where perftest is installed, against ib_write_bw, the port's own
# limit), side by side in one sitting, alternated, for a pingpong and a 2-rank allreduce sweep.
#
#   perf/scripts/ib_sweep.sh [BUILD_DIR] [ROUNDS]
#
# On a machine with an RDMA port: ranks as two emulated hosts on this machine talk through the port (HCA loopback).
# On a machine without one: CHORUS_IB_EMULATION=1 measures the software verbs device instead, which says what the
# protocol costs over TCP, not what a real adapter does. Writes perf/ib-sweep-<date>.txt and prints medians.
set -euo pipefail
build=${1:-build}
rounds=${2:-3}
run=("$build/launcher/chorusrun" -n 2 --hosts 2)
perf="$build/perf/chorus-perf"
out="perf/ib-sweep-$(date +%Y%m%d-%H%M%S).txt"
emulation=0
if ! "$build/perf/chorus-topo" 2>/dev/null | sed -n '/^RDMA ports/,/^$/p' | grep -q ACTIVE; then
  emulation=1
  echo "ib_sweep: no active RDMA port here: measuring the software verbs device (CHORUS_IB_EMULATION=1)" | tee "$out"
fi
export CHORUS_IB_EMULATION=$emulation
# What is there: every port (state, link layer, rate, MTU, NUMA node, GPUs near), then the port, GID and verbs
# library each rank chose.
"$build/perf/chorus-topo" | sed -n '/^RDMA ports/,/^$/p' | tee -a "$out"
CHORUS_TRANSPORT=ib CHORUS_DEBUG=INFO "${run[@]}" "$perf" allreduce -b 8 -e 8 -n 1 -w 0 2>&1 |
  grep -E 'ib transport on|via ib' | tee -a "$out"
if command -v ib_write_bw >/dev/null && [ "$emulation" = 0 ]; then
  echo "== ib_write_bw (the port's limit)" | tee -a "$out"
  (ib_write_bw -a -F >/dev/null 2>&1 &) ; sleep 1
  ib_write_bw -a -F localhost 2>&1 | tee -a "$out" || true
fi
for round in $(seq "$rounds"); do
  for transport in ib tcp; do
    echo "== round $round transport $transport pingpong" | tee -a "$out"
    CHORUS_TRANSPORT=$transport "${run[@]}" "$perf" pingpong -b 8 -e 1M -f 8 -n 200 -w 20 2>&1 | grep -E '^ +[0-9]' | tee -a "$out"
    echo "== round $round transport $transport allreduce" | tee -a "$out"
    CHORUS_TRANSPORT=$transport "${run[@]}" "$perf" allreduce -b 8 -e 64M -f 8 -n 20 -w 5 2>&1 | grep -E '^ +[0-9]' | tee -a "$out"
  done
done
# Medians per transport, test and size: time (us) and busbw (GB/s) of the out-of-place column.
python3 - "$out" <<'PY'
import re, statistics, sys
rows = {}
cur = None
for line in open(sys.argv[1]):
    m = re.match(r"== round \d+ transport (\w+) (\w+)", line)
    if m:
        cur = (m.group(1), m.group(2))
        continue
    f = line.split()
    if cur and len(f) >= 8 and f[0].isdigit():
        rows.setdefault((cur[1], int(f[0]), cur[0]), []).append((float(f[5]), float(f[7])))
print(f"{'test':10} {'bytes':>10} {'ib us':>10} {'tcp us':>10} {'ib/tcp time':>12}")
for (test, size, transport) in sorted(k for k in rows if k[2] == "ib"):
    ib = statistics.median(t for t, _ in rows[(test, size, "ib")])
    tcp = rows.get((test, size, "tcp"))
    tcpm = statistics.median(t for t, _ in tcp) if tcp else float("nan")
    print(f"{test:10} {size:>10} {ib:>10.1f} {tcpm:>10.1f} {ib / tcpm:>12.2f}")
PY
echo "ib_sweep: wrote $out"
