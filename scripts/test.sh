#!/usr/bin/env bash
# Installs what Chorus needs, builds it with its tests, and runs the whole test suite (ctest); then the whole
# suite again under ASan+UBSan and its threaded parts under TSan (library and tools instrumented); with
# CHORUS_CI_FULL_SANITIZERS=1 also both suites fully instrumented (scripts/sanitize.sh, 1-2 hours on 2 cores).
# CHORUS_SKIP_SANITIZERS=1 runs the plain build and suite only.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
phase() { echo "=== test.sh: $1 (at $((SECONDS - start))s)"; }
bash scripts/install-deps.sh
phase "plain build"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCHORUS_TORCH=ON
cmake --build build -j "$(nproc)"
# The install tree must work too: a consumer builds against it with find_package and pkg-config.
rm -rf build/test-install
cmake --install build --prefix "$PWD/build/test-install" >/dev/null
phase "plain tests"
(cd build && ctest -j 2 --output-on-failure --timeout 600)
if [ "${CHORUS_SKIP_SANITIZERS:-0}" = 1 ]; then
  phase "done (sanitizers skipped)"
  exit 0
fi
# Sanitizers within CI's 20-minute budget on 2 cores: the library and tools instrumented, the tests' own files not
# (CHORUS_SANITIZE_TEST_CODE=OFF: what the sanitizers are there to check, at a fraction of the compile time), and
# the case matrices sampled (CHORUS_TEST_CASE_SAMPLE: every test runs; instrumented reductions are 5-10x slower).
# sanitized_suite BUILD_DIR SANITIZERS SAMPLE [ctest arguments...]
sanitized_suite() {
  local dir=$1 san=$2 sample=$3
  shift 3
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1" \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1" -DCHORUS_SANITIZE="$san" -DCHORUS_SANITIZE_TEST_CODE=OFF \
    -DCHORUS_BUILD_BENCHMARKS=OFF >/dev/null
  cmake --build "$dir" -j "$(nproc)" --target chorus_unit_tests chorus_collective_tests chorus-faults
  (cd "$dir" && CHORUS_TEST_CASE_SAMPLE=$sample UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    ASAN_OPTIONS=detect_leaks=1 TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:die_after_fork=0 \
    ctest -j 2 --output-on-failure --timeout 900 "$@")
}
failed=()
phase "ASan+UBSan build and whole suite"
sanitized_suite build-asan address,undefined 3 || failed+=("ASan+UBSan")
# TSan: the threaded parts, which is everything but the large process-world matrices (one process per rank, each
# single-threaded) beyond their 3-rank instances: unit tests (store server, handshakes, connections, emulated
# device streams), thread worlds, abort and timeout from other threads, device calls and their progress thread,
# strangers, sequences and mismatches. (die_after_fork=0: one test forks a process that starts threads.)
phase "TSan build and the threaded parts"
tsan_skip='^[A-Za-z]+/(StripedLargeMessage|AlgorithmMatrix|WorldSize)Test\.|/([4-9]|1[0-9])ranks'
tsan_skip+='|^[A-Za-z]+/(AllReduce|Reduce|ReduceScatter|AllGather|Broadcast|SliceSize)Test\..*/[12]ranks'
# chorus-faults forks its ranks from a process that already runs threads, which TSan cannot follow ("dup thread
# with used id"); the plain and ASan runs cover it.
tsan_skip+='|^ib_fault_scenarios$|^elastic_fault_scenario'
sanitized_suite build-tsan thread 5 -E "$tsan_skip" || failed+=("TSan")
if [ "${CHORUS_CI_FULL_SANITIZERS:-0}" = 1 ]; then
  phase "fully instrumented ASan+UBSan and TSan suites"
  bash scripts/sanitize.sh address,undefined || failed+=("ASan+UBSan, fully instrumented")
  bash scripts/sanitize.sh thread || failed+=("TSan, fully instrumented")
fi
if [ ${#failed[@]} -gt 0 ]; then
  phase "failed: ${failed[*]}"
  exit 1
fi
phase "done"
