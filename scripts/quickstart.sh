#!/usr/bin/env bash
# The quick start: installs only what the main job needs, builds the library, chorusrun and chorus-perf (nothing
# else), and runs the main job: a 4-rank allreduce sweep from 8 B to 64 MiB on this machine. The sweep ends with a
# summary (peak bus bandwidth and where, small-message latency, transport, algorithms) and leaves a CSV and an SVG
# plot in quickstart/.
#
# GPU code is compiled only where it can run: a GPU and its driver answer nvidia-smi, for that GPU's architecture
# (CHORUS_CUDA=ON or OFF overrides). The build is in build-quickstart/; the test command's is in build/.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
step() { echo "=== quickstart: $1 (at $((SECONDS - start)) s)"; }

step "installing what the build needs"
bash scripts/install-deps.sh quickstart

cuda=${CHORUS_CUDA:-}
if [ -z "$cuda" ]; then
  cuda=OFF
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then cuda=ON; fi
fi
cuda_args=(-DCHORUS_CUDA="$cuda")
if [ "$cuda" = ON ]; then
  # nvcc is not on PATH in a default CUDA install; "native" is the architecture of the GPUs present.
  [ -x /usr/local/cuda/bin/nvcc ] && cuda_args+=(-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc)
  cuda_args+=(-DCMAKE_CUDA_ARCHITECTURES=native)
fi

step "building the library, chorusrun and chorus-perf (CUDA $cuda)"
# Warnings do not stop a user's build: another compiler warns where the tested one (scripts/test.sh, -Werror) did not.
cmake -S . -B build-quickstart -G Ninja -DCMAKE_BUILD_TYPE=Release -DCHORUS_BUILD_TESTS=OFF \
  -DCHORUS_BUILD_BENCHMARKS=OFF -DCHORUS_TORCH=OFF -DCHORUS_WERROR=OFF "${cuda_args[@]}" >/dev/null
cmake --build build-quickstart -j "$(nproc)" --target chorus chorusrun chorus-perf

mkdir -p quickstart
step "running: chorusrun -n 4 chorus-perf allreduce -b 8 -e 64M -f 2"
./build-quickstart/launcher/chorusrun -n 4 ./build-quickstart/perf/chorus-perf allreduce -b 8 -e 64M -f 2 \
  --csv quickstart/allreduce.csv --plot quickstart/allreduce.svg
step "done"
echo "CSV:  $PWD/quickstart/allreduce.csv"
echo "Plot: $PWD/quickstart/allreduce.svg"
