#!/usr/bin/env bash
# Installs the Debian 12 packages Chorus needs. Idempotent; needs root.
#   scripts/install-deps.sh             everything: build, tests, sanitizers, the torch backend, peers' tools
#   scripts/install-deps.sh quickstart  only what the quick start's sweep needs: a compiler, CMake and the library's
#                                       headers (no tests, no torch, no plotting: chorus-perf draws its own SVG)
set -euo pipefail
# The library and its tools.
BUILD=(g++ cmake ninja-build pkg-config libasio-dev libssl-dev nlohmann-json3-dev
       # hwloc: packages, NUMA nodes, caches and NICs (without it, one package and one NUMA node are assumed);
       # rdma-core's verbs header, for the ib transport (the library itself is loaded at run time).
       libhwloc-dev libibverbs-dev)
# The test suite and the work around it.
TESTS=(build-essential git procps iproute2 libgtest-dev libgmock-dev googletest
       libbenchmark-dev libcli11-dev rdma-core clang libclang-rt-dev python3
       # The torch.distributed backend (python/) and its pytest suite (Debian's torch is /usr/bin/python3's); plots.
       python3-torch libtorch-dev pybind11-dev python3-dev python3-pytest python3-matplotlib
       # The chorus Python package's tests (tests/python): numpy arrays.
       python3-numpy
       # Multipath TCP beside Chorus's own striping (mptcpize, perf/scripts/multirail_bench.sh).
       mptcpize
       # A real Prometheus server scrapes a running job (tests/metrics/prometheus_scrape_test.sh).
       prometheus
       # The loopback ceiling that perf/scripts/steady_bench.sh measures beside each job.
       iperf3
       # The launchers the launch tests start jobs under: Open MPI's mpirun (a PMIx server; brings libpmix2) and a
       # real Slurm with munge (tests/lab/slurm_harness.sh). Slurm's PMIx plugin loads the unversioned libpmix.so,
       # which only libpmix-dev provides.
       openmpi-bin slurm-wlm munge libpmix-dev
       # The peers perf/scripts/side_by_side.sh builds and runs beside Chorus: Gloo and Open MPI.
       libgloo-dev libopenmpi-dev)
case "${1:-all}" in
  quickstart) PKGS=("${BUILD[@]}") ;;
  all) PKGS=("${BUILD[@]}" "${TESTS[@]}") ;;
  *) echo "usage: $0 [quickstart|all]" >&2; exit 2 ;;
esac
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # force-unsafe-io: dpkg skips its fsync of every unpacked file, as Debian's container images configure it; a
  # third of the quick start's install time on a VM disk (perf/results/ci.md). Only a power cut in the middle of
  # the install would need it run again.
  apt-get install -y -qq --no-install-recommends -o Dpkg::Options::=--force-unsafe-io "${missing[@]}" >/dev/null
fi
