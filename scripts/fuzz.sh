#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/*_fuzz.cc) with clang, ASan, UBSan and coverage, and runs each in turn for
# the given time, one process at a time, starting from its seed corpus in fuzz/corpus/<target>/.
# Usage: scripts/fuzz.sh [seconds-per-target (default 60)] [target ...]   (default: every target)
# New inputs go to build-fuzz/corpus/<target>/ and crashes to build-fuzz/artifacts/<target>/; a crash makes the
# script exit non-zero after all targets ran. Copy a crash's input into fuzz/corpus/<target>/ once fixed.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
[ $# -gt 0 ] && shift
dir=$(realpath -m "${CHORUS_FUZZ_BUILD_DIR:-build-fuzz}")
repo=$PWD
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in fuzz/*_fuzz.cc; do targets+=("$(basename "$f" .cc)"); done
fi
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCHORUS_FUZZ=ON -DCHORUS_SANITIZE=address,undefined -DCHORUS_BUILD_TESTS=OFF -DCHORUS_BUILD_BENCHMARKS=OFF \
  -DCMAKE_CXX_FLAGS=-Wno-unknown-warning-option -DCMAKE_C_FLAGS=-Wno-unknown-warning-option >/dev/null
cmake --build "$dir" -j "$(nproc)" --target "${targets[@]}"
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$repo/tests/lsan.supp:print_suppressions=0}  # libcrypto's own state
failed=()
for t in "${targets[@]}"; do
  seeds=$repo/fuzz/corpus/$t
  work=$dir/corpus/$t
  artifacts=$dir/artifacts/$t
  log=$dir/logs/$t.log
  mkdir -p "$seeds" "$work" "$artifacts" "$dir/logs"
  echo "=== $t: ${seconds}s from $(ls "$seeds" | wc -l) seeds"
  dict=()
  [ -f "$repo/fuzz/$t.dict" ] && dict=(-dict="$repo/fuzz/$t.dict")
  rc=0
  # One worker, one job: the fuzzer runs in a child whose output goes to fuzz-0.log in the current directory.
  (cd "$dir/logs" && "$dir/fuzz/$t" "$work" "$seeds" -max_total_time="$seconds" -jobs=1 -workers=1 \
      -artifact_prefix="$artifacts/" -print_final_stats=1 "${dict[@]}" >/dev/null 2>&1) || rc=$?
  mv "$dir/logs/fuzz-0.log" "$log" 2>/dev/null || true
  grep -E "^#[0-9]+[[:space:]]+(DONE|pulse|NEW|REDUCE|INITED)" "$log" | tail -n 1 || true
  grep -E "^stat::" "$log" || true
  if [ $rc -ne 0 ] || ls "$artifacts" | grep -q .; then
    echo "!!! $t found a problem (exit $rc); see $log and $artifacts"
    failed+=("$t")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: problems in ${failed[*]}"
  exit 1
fi
echo "fuzz: ${#targets[@]} targets ran ${seconds}s each without a finding"
