#!/usr/bin/env bash
# Installs what Chorus needs, builds it with its tests, and runs the whole test suite (ctest); then the whole
# suite again under ASan+UBSan, and the threaded parts under TSan (scripts/sanitize.sh).
# CHORUS_SKIP_SANITIZERS=1 runs the plain build and suite only.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
phase() { echo "=== test.sh: $1 (at $((SECONDS - start))s)"; }
bash scripts/install-deps.sh
phase "plain build"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
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
phase "ASan+UBSan build and tests"
bash scripts/sanitize.sh address,undefined
# TSan: what runs threads against each other: the store server, the channel handshake and the TCP accept loop,
# abort and timeout from other threads, thread-world collectives (3 ranks), and a multi-process job.
tsan_tests='^(StoreTest|StoreAuthTest|SecurityChannelAuthTest|TcpAuthTest|FailureModesTest|ThreadWorldTest'
tsan_tests+='|StrangerTest)\.|^Worlds/(AllReduceTest|BroadcastTest|ReduceTest|AllGatherTest|ReduceScatterTest'
tsan_tests+='|SequenceTest|ShmThreadWorldTest)\..*/3ranks'
phase "TSan build and tests"
bash scripts/sanitize.sh thread "$tsan_tests"
phase "done"
