#!/usr/bin/env bash
# Installs what Chorus needs, builds it with its tests, and runs the whole test suite (the gtest binaries in halves,
# the rest under ctest); then the whole suite again under ASan+UBSan and the unit tests under TSan (library and tools
# instrumented); with CHORUS_CI_FULL_SANITIZERS=1 also both suites fully instrumented (scripts/sanitize.sh, 1-2 hours
# on 2 cores). CHORUS_SKIP_SANITIZERS=1 runs the plain build and suite only.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
phase() { echo "=== test.sh: $1 (at $((SECONDS - start))s)"; }
bash scripts/install-deps.sh
phase "plain build"
# The CUDA kernels compile for one architecture here (nothing runs them: no GPU), for two in a user's build.
export CUDAARCHS=${CUDAARCHS:-90}
# (The library in unity batches: this build is tested, not timed; scripts/quickstart.sh builds it file by file.)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCHORUS_TORCH=ON -DCHORUS_UNITY_LIBRARY=ON
cmake --build build -j "$(nproc)"
# The install tree must work too: a consumer builds against it with find_package and pkg-config.
rm -rf build/test-install
cmake --install build --prefix "$PWD/build/test-install" >/dev/null
# The test binaries run as two halves each (halves, in scripts/gtest_halves.sh).
source scripts/gtest_halves.sh

# Sanitizers within CI's budget on 2 cores: the library and tools instrumented, the tests' own files not
# (CHORUS_SANITIZE_TEST_CODE=OFF: what the sanitizers are there to check), and not even compiled again: each
# sanitizer tree links the objects the plain tree compiled for its tests (CHORUS_TEST_OBJECTS_FROM;
# tests/CMakeLists.txt compiles them alike in every tree). Both are sampled, every test still running: the case
# matrices (CHORUS_TEST_CASE_SAMPLE: one case in N of a matrix; instrumented reductions are 5-10x slower) and the
# instances of parameterized tests (INSTANCE_SAMPLE: one world in 4 of each test under ASan, 3 under TSan, picked
# by the commit, so that successive commits try the others; an instrumented world of 4-8 processes costs 1-3 s to
# start and connect).
# The sanitizer trees are compiled by clang: in half g++'s time (the ASan+UBSan library 160 CPU-s against 330), and
# its UBSan also catches offsets from null pointers and its order of evaluation differs from g++'s (both found bugs
# that g++'s trees passed). The test objects they link come from the g++ tree: one C++ library, libstdc++, for all.
sanitize=1
[ "${CHORUS_SKIP_SANITIZERS:-0}" = 1 ] && sanitize=0
# sanitized_build BUILD_DIR SANITIZERS "TARGETS": configures and builds a sanitizer tree.
sanitized_build() {
  local dir=$1 san=$2 targets=$3
  cmake -S . -B "$dir" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1" \
    -DCHORUS_SANITIZE="$san" -DCHORUS_SANITIZE_TEST_CODE=OFF -DCHORUS_TEST_OBJECTS_FROM="$PWD/build" \
    -DCHORUS_BUILD_BENCHMARKS=OFF >/dev/null || return 1
  # shellcheck disable=SC2086
  cmake --build "$dir" -j "$(nproc)" --target $targets
}
# Each sanitizer tree builds beside the suite before it, at nice 19: the tests spend much of their time waiting
# (process worlds starting, timeouts, shaped links, torch's imports), and the build takes only what the tests leave
# of the cores. begin_build BUILD_DIR SANITIZERS "TARGETS" starts it in a process group of its own (set -m), which an
# early exit ends; end_build BUILD_DIR waits for it and shows its log's end if it failed.
declare -A builds=()
begin_build() {
  set -m
  (renice -n 19 -p "$BASHPID" >/dev/null && sanitized_build "$@") >"$1.log" 2>&1 &
  builds[$1]=$!
  set +m
}
end_build() {
  local rc=0
  wait "${builds[$1]}" || rc=$?
  unset "builds[$1]"
  [ $rc = 0 ] || { echo "$1: build failed (exit $rc)"; tail -n 40 "$1.log"; }
  return $rc
}
trap 'for pid in "${builds[@]}"; do kill -- "-$pid" 2>/dev/null || true; done' EXIT
lsan=$PWD/tests/lsan.supp  # libcrypto's per-thread state (see the file)
# sanitized_run BUILD_DIR SAMPLE "TEST BINARIES" [ctest arguments for the other tests...]
sanitized_run() {
  local dir=$1 sample=$2 binaries=$3
  shift 3
  (
    cd "$dir"
    export CHORUS_TEST_CASE_SAMPLE=$sample UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
      ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS="suppressions=$lsan:print_suppressions=0" \
      TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:die_after_fork=0
    local bin rc=0
    for bin in $binaries; do halves "$bin" "${HALVES_ALONE:-}" || rc=1; done
    if [ $# -gt 0 ]; then ctest -j 2 --output-on-failure --timeout 900 "$@" || rc=1; fi
    exit $rc
  )
}

if [ $sanitize = 1 ]; then
  begin_build build-asan address,undefined "chorus_unit_tests chorus_collective_tests chorus-faults"
fi
phase "plain tests"
(
  cd build
  rc=0
  halves chorus_unit_tests || rc=1
  halves chorus_collective_tests || rc=1
  ctest -j 2 --output-on-failure --timeout 600 -LE "unit|collective" || rc=1
  exit $rc
)
if [ $sanitize = 0 ]; then
  phase "done (sanitizers skipped)"
  exit 0
fi
failed=()
phase "ASan+UBSan: the rest of its build"
if end_build build-asan; then
  # TSan: the unit tests (chorus_unit_tests), where the threaded machinery is tested piece by piece: the store server
  # and its sessions, handshakes, connections of every transport, emulated device streams and their progress
  # threads, host streams, abort and timeouts from other threads. (die_after_fork=0: one test forks a process that
  # starts threads.) The collective suites under TSan (thread worlds, device calls, strangers, mismatches) run with
  # CHORUS_CI_FULL_SANITIZERS=1: within CI's budget on 2 cores there is room for one instrumented build of them.
  begin_build build-tsan thread chorus_unit_tests
  phase "ASan+UBSan: the whole suite"
  INSTANCE_SAMPLE=4 sanitized_run build-asan 25 "chorus_unit_tests chorus_collective_tests" -LE "unit|collective" ||
    failed+=("ASan+UBSan")
else
  failed+=("ASan+UBSan build")
  begin_build build-tsan thread chorus_unit_tests
fi
phase "TSan: the rest of its build"
if end_build build-tsan; then
  phase "TSan: the unit tests"
  INSTANCE_SAMPLE=3 HALVES_ALONE='Fork' sanitized_run build-tsan 5 chorus_unit_tests || failed+=("TSan")
else
  failed+=("TSan build")
fi
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
