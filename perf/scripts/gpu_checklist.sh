#!/usr/bin/env bash
# The GPU checklist (README "GPU"): the GPU tests, the reduction kernels against the device copy, and a two-rank
# device allreduce sweep, plus the figures that say where device calls' time goes (slice size, small-call latency,
# every collective at 64 MiB). For a machine with a CUDA GPU, from a build configured with -DCHORUS_CUDA=ON.
#
#   perf/scripts/gpu_checklist.sh BUILD_DIR [LOG_DIR]
#
# Each step has its own deadline and the script goes on after a failing step, so one run gives every figure;
# it exits non-zero when any step failed. Logs go to LOG_DIR (default: BUILD_DIR/gpu-checklist).
set -uo pipefail
build=$(cd "${1:?usage: gpu_checklist.sh BUILD_DIR [LOG_DIR]}" && pwd)
logs=${2:-$build/gpu-checklist}
mkdir -p "$logs"
failed=0

step() {  # step NAME SECONDS CMD...: runs CMD under a deadline, tees its output to LOG_DIR/NAME.log
  local name=$1 limit=$2
  shift 2
  echo "=== $name: $*"
  timeout -k 5 "$limit" "$@" 2>&1 | tee "$logs/$name.log"
  local rc=${PIPESTATUS[0]}
  if [[ $rc -ne 0 ]]; then
    echo "=== $name FAILED (exit $rc)"
    failed=1
  fi
}

nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.mem --format=csv | tee "$logs/gpu.log"
run="$build/launcher/chorusrun"
perf="$build/perf/chorus-perf"
step ctest 200 ctest --test-dir "$build" -R 'Cuda|Gpu|MemoryLocation' --output-on-failure --timeout 120
step reduce_bench 60 "$build/perf/gpu_bench/chorus-reduce-bench-gpu"
step allreduce 120 "$run" -n 2 --timeout 110 "$perf" allreduce -b 1M -e 1G -f 4 --device gpu
step allreduce_chunk4m 60 env CHORUS_CHUNK_SIZE=4M "$run" -n 2 --timeout 55 "$perf" allreduce -b 1M -e 256M -f 4 \
  --device gpu
step allreduce_small 60 "$run" -n 2 --timeout 55 "$perf" allreduce -b 8 -e 8 -n 200 --device gpu
for c in broadcast reduce allgather reducescatter; do
  step "$c" 60 "$run" -n 2 --timeout 55 "$perf" "$c" -b 64M -e 64M --device gpu
done
exit $failed
