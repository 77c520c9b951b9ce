#!/usr/bin/env bash
# Installs what Chorus needs, builds and installs it under ./install, and runs the main job:
# a 4-rank allreduce sweep (8 B .. 64 MiB) through chorusrun and chorus-perf.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCHORUS_UNITY_LIBRARY=OFF
cmake --build build -j "$(nproc)"
cmake --install build --prefix "$PWD/install" >/dev/null
exec ./install/bin/chorusrun -n 4 ./install/bin/chorus-perf allreduce -b 8 -e 64M -f 2
