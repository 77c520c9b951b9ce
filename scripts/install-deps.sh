#!/usr/bin/env bash
# Installs every Debian 12 package Chorus needs to build, test and benchmark. Idempotent; needs root.
set -euo pipefail
PKGS=(build-essential cmake ninja-build pkg-config git procps iproute2
      libboost-dev libboost-system-dev libgtest-dev libgmock-dev googletest libbenchmark-dev
      libhwloc-dev libcli11-dev nlohmann-json3-dev libibverbs-dev rdma-core libssl-dev
      clang libclang-rt-dev python3
      # The torch.distributed backend (python/) and its pytest suite (Debian's torch is /usr/bin/python3's); plots.
      python3-torch libtorch-dev pybind11-dev python3-dev python3-pytest python3-matplotlib
      # Multipath TCP beside Chorus's own striping (mptcpize, perf/scripts/multirail_bench.sh).
      mptcpize
      # The loopback ceiling that perf/scripts/steady_bench.sh measures beside each job.
      iperf3)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
