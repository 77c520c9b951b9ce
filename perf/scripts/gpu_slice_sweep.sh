#!/usr/bin/env bash
# Device calls' slice size (CHORUS_DEVICE_CHUNK_SIZE) against allreduce busbw on one GPU with two ranks, under MPS
# (one shared context, as a rank per GPU has) in two rounds, then without it (the GPU switching between the two
# ranks' contexts). Prints one line per slice size and size: busbw out of place and in place.
#
#   perf/scripts/gpu_slice_sweep.sh BUILD_DIR [SLICES...]     (default: 512K 1M 2M 4M 8M 16M 32M)
#
# BUILD_DIR holds launcher/chorusrun and perf/chorus-perf (a build, or a copy of those at the same paths).
set -uo pipefail
build=$(cd "${1:?usage: gpu_slice_sweep.sh BUILD_DIR [SLICES...]}" && pwd)
shift
slices=("$@")
[[ ${#slices[@]} -gt 0 ]] || slices=(512K 1M 2M 4M 8M 16M 32M)

sweep() {  # sweep LABEL SLICE LARGEST: one allreduce sweep from 1 MiB to LARGEST, its figures labelled
  local label=$1 slice=$2 largest=$3
  CHORUS_DEVICE_CHUNK_SIZE=$slice timeout -k 5 100 "$build/launcher/chorusrun" -n 2 --timeout 95 \
    "$build/perf/chorus-perf" allreduce -b 1M -e "$largest" -f 4 --device gpu 2>&1 |
    awk -v l="$label" -v s="$slice" '/^ +[0-9]/ {printf "%-6s slice %-5s %11s B  busbw %6s / %6s GB/s\n", l, s, $1, $8, $12}'
}

if command -v nvidia-cuda-mps-control >/dev/null; then
  export CUDA_MPS_PIPE_DIRECTORY=${TMPDIR:-/tmp}/chorus-mps-pipe CUDA_MPS_LOG_DIRECTORY=${TMPDIR:-/tmp}/chorus-mps-log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
  if nvidia-cuda-mps-control -d; then
    for round in 1 2; do
      for s in "${slices[@]}"; do sweep "mps$round" "$s" 1G; done
    done
    echo quit | nvidia-cuda-mps-control
  fi
  # Without the daemon's pipe folder the plain runs below never attach to it, even while it is still exiting.
  unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
fi
for s in "${slices[@]}"; do sweep plain "$s" 256M; done
