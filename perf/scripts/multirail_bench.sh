#!/usr/bin/env bash
# TCP over two NICs per host (target: striped 64 MiB busbw at least 1.8x one NIC's), beside
# Multipath TCP: in the lab of perf/labs/two_nics.json (2 hosts, two 1 Gbit/s NICs each), a 2-rank allreduce
#   one      CHORUS_SOCKET_IFNAME==eth0 (one NIC)
#   striped  both NICs, striped by Chorus (the lab's own CHORUS_SOCKET_IFNAME)
#   mptcp    one NIC's address, every socket made Multipath TCP by mptcpize, the kernel adding a subflow over eth1
# alternated ROUNDS times; prints each run, the medians per size and the ratios to one NIC (busbw from the
# out-of-place time, to 4 digits: at 2 ranks, bytes / time). Needs root and mptcpize.
#   perf/scripts/multirail_bench.sh BUILD_DIR [ROUNDS] [SIZES]    (default 3, "1M 4M 16M 64M")
set -euo pipefail
build=${1:?usage: multirail_bench.sh BUILD_DIR [ROUNDS] [SIZES]}
rounds=${2:-3}
sizes=${3:-1M 4M 16M 64M}
here=$(cd "$(dirname "$0")" && pwd)
lab="$here/../labs/two_nics.json"
command -v mptcpize >/dev/null || { echo "multirail_bench: needs mptcpize (apt-get install mptcpize)" >&2; exit 2; }
out=$(mktemp /tmp/chorus-multirail-bench-XXXXXX)
python3 "$build/perf/chorus-lab" up "$lab" >/dev/null
trap 'python3 "$build/perf/chorus-lab" down two-nics >/dev/null; rm -f "$out"' EXIT
# Multipath TCP: each host announces and dials from its second NIC's address.
for i in 0 1; do
  ns=chlab-two-nics-h$i
  ip -n "$ns" mptcp limits set subflow 4 add_addr_accepted 4
  ip -n "$ns" mptcp endpoint add "10.78.0.$((i + 1))" dev eth1 signal subflow
done
for ((r = 1; r <= rounds; ++r)); do
  for v in one striped mptcp; do
    case $v in
      one) pre=(env CHORUS_SOCKET_IFNAME==eth0) ;;
      striped) pre=(env) ;;
      mptcp) pre=(mptcpize run env CHORUS_SOCKET_IFNAME==eth0) ;;
    esac
    for s in $sizes; do
      busbw=$(timeout 300 python3 "$build/perf/chorus-lab" run "$lab" --timeout 250 -- "${pre[@]}" CHORUS_TRANSPORT=tcp \
        "$build/perf/chorus-perf" allreduce -b "$s" -e "$s" -n 5 -w 2 2>/dev/null | awk '/^ +[0-9]/ {printf "%.4f", $1 / $6 / 1000}')
      echo "round $r $v $s busbw ${busbw} GB/s"
      echo "$v $s $busbw" >> "$out"
    done
  done
done
python3 - "$out" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    v, s, busbw = line.split()
    runs.setdefault(s, {}).setdefault(v, []).append(float(busbw))
print(f"{'size':>6} {'one':>7} {'striped':>8} {'mptcp':>7}  striped/one  mptcp/one  (median busbw, GB/s)")
for s, by in runs.items():
    m = {v: statistics.median(x) for v, x in by.items()}
    print(f"{s:>6} {m['one']:7.3f} {m['striped']:8.3f} {m['mptcp']:7.3f}  {m['striped'] / m['one']:11.2f}"
          f"  {m['mptcp'] / m['one']:9.2f}")
PY
