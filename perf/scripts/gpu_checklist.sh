#!/usr/bin/env bash
# The GPU checklist (docs/gpus.md): the GPU tests, the reduction kernels against the device copy, and a two-rank
# device allreduce sweep, plus the figures that say where device calls' time goes (slice size, small-call latency,
# every collective at 64 MiB), then the same allreduce figures under MPS where the machine has it (two ranks on
# one GPU otherwise pay for its context switches: perf/results/gpu.md, "Two contexts on one GPU, and MPS"; the
# figures of earlier runs are in that file too). For a machine with a CUDA GPU, from a build configured with
# -DCHORUS_CUDA=ON, or a copy of its five programs at the same paths under BUILD_DIR (a build carried to a device
# machine: then the GPU test binary runs directly, filtered as ctest would).
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
if [[ -f "$build/CTestTestfile.cmake" ]]; then
  step ctest 200 ctest --test-dir "$build" -R 'Cuda|Gpu|MemoryLocation' --output-on-failure --timeout 120
else
  step gpu_tests 200 "$build/tests/gpu/chorus_gpu_tests" --gtest_filter='*Cuda*:*Gpu*:*MemoryLocation*'
fi
step reduce_bench 60 "$build/perf/gpu_bench/chorus-reduce-bench-gpu"
step allreduce 120 "$run" -n 2 --timeout 110 "$perf" allreduce -b 1M -e 1G -f 4 --device gpu
step allreduce_slice512k 60 env CHORUS_DEVICE_CHUNK_SIZE=512K "$run" -n 2 --timeout 55 "$perf" allreduce -b 1M \
  -e 256M -f 4 --device gpu
step allreduce_small 60 "$run" -n 2 --timeout 55 "$perf" allreduce -b 8 -e 8 -n 200 --device gpu
for c in broadcast reduce allgather reducescatter; do
  step "$c" 60 "$run" -n 2 --timeout 55 "$perf" "$c" -b 64M -e 64M --device gpu
done
# Device windows (docs/windows.md): put/signal against send/recv on device buffers, ranks as processes (CUDA IPC)
# and as threads (each other's pointers).
wbench="$build/perf/chorus-device-window-bench"
step device_windows 60 "$run" -n 2 --timeout 55 "$wbench" 7
step device_windows_threads 60 "$wbench" 7

# Under MPS: one shared context, as one rank per GPU would have. The daemon gets its own pipe and log folders and
# is stopped before the script ends, whatever the steps gave.
if command -v nvidia-cuda-mps-control >/dev/null; then
  export CUDA_MPS_PIPE_DIRECTORY=$logs/mps-pipe CUDA_MPS_LOG_DIRECTORY=$logs/mps-log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  if nvidia-cuda-mps-control -d; then
    trap 'echo quit | nvidia-cuda-mps-control' EXIT
    step mps_allreduce 120 "$run" -n 2 --timeout 110 "$perf" allreduce -b 1M -e 1G -f 4 --device gpu
    step mps_allreduce_small 60 "$run" -n 2 --timeout 55 "$perf" allreduce -b 8 -e 8 -n 200 --device gpu
    step mps_broadcast 60 "$run" -n 2 --timeout 55 "$perf" broadcast -b 64M -e 64M --device gpu
  else
    echo "=== MPS: nvidia-cuda-mps-control -d failed; no MPS figures"
  fi
fi
exit $failed
