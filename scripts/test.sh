#!/usr/bin/env bash
# Installs what Chorus needs, builds it with its tests, and runs the whole test suite (ctest).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$(nproc)"
# The install tree must work too: a consumer builds against it with find_package and pkg-config.
rm -rf build/test-install
cmake --install build --prefix "$PWD/build/test-install" >/dev/null
cd build
ctest -j 2 --output-on-failure --timeout 600
