#!/usr/bin/env bash
# Builds the whole project and its tests with sanitizers and runs the suite.
# Usage: scripts/sanitize.sh [address,undefined|thread]   (default address,undefined; build in build-<name>)
set -euo pipefail
cd "$(dirname "$0")/.."
san=${1:-address,undefined}
dir="build-${san//,/-}"
bash scripts/install-deps.sh
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCHORUS_SANITIZE="$san" -DCHORUS_BUILD_BENCHMARKS=OFF
cmake --build "$dir" -j "$(nproc)"
cd "$dir"
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ctest -j 2 --output-on-failure --timeout 900
