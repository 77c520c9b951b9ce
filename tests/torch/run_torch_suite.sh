#!/usr/bin/env bash
# PyTorch's own distributed suite, whole, for gloo and chorus at world sizes 2 and 3 (about an hour on 2 cores),
# then every test Gloo passed that chorus did not. Results (JSON per run, logs) go to OUT (default
# build/torch-suite). Needs the build's chorus_torch (build/python). Usage: run_torch_suite.sh [OUT] [-k NAME ...]
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:-build/torch-suite}
shift || true
mkdir -p "$out"
status=0
for ws in 2 3; do
  for backend in gloo chorus; do
    echo "=== $backend, world size $ws"
    /usr/bin/python3 tests/torch/torch_suite.py run --backend "$backend" --world-size "$ws" \
      --json "$out/$backend-$ws.json" "$@" 2>"$out/$backend-$ws.log" | tail -n 40
  done
  /usr/bin/python3 tests/torch/torch_suite.py compare "$out/gloo-$ws.json" "$out/chorus-$ws.json" || status=1
done
exit $status
