#!/usr/bin/env bash
# Builds the tests with sanitizers and runs them (all, or those whose ctest names match a regex).
# Usage: scripts/sanitize.sh [address,undefined|thread] [ctest-regex]
#   default address,undefined and every test; builds in build-<sanitizers> (CHORUS_SANITIZE_BUILD_DIR overrides).
# For speed on small CI machines: -O1, only the test binaries and what they run (no benchmarks, no perf tools),
# ctest -j2. Any sanitizer report fails the test that triggered it.
set -euo pipefail
cd "$(dirname "$0")/.."
san=${1:-address,undefined}
filter=${2:-}
dir=${CHORUS_SANITIZE_BUILD_DIR:-build-${san//,/-}}
jobs=${CHORUS_BUILD_JOBS:-$(nproc)}
bash scripts/install-deps.sh
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1" -DCHORUS_SANITIZE="$san" -DCHORUS_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build "$dir" -j "$jobs" --target chorus_unit_tests chorus_collective_tests chorus-faults
# libcrypto's per-thread state is not Chorus's leak (tests/lsan.supp says why).
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/lsan.supp:print_suppressions=0}
cd "$dir"
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:die_after_fork=0}
args=(-j 2 --output-on-failure --timeout 900)
[ -n "$filter" ] && args+=(-R "$filter")
# chorus-faults forks its ranks from a process that already runs threads, which TSan cannot follow.
[[ "$san" == *thread* ]] && args+=(-E '^ib_fault_scenarios$')
ctest "${args[@]}"
