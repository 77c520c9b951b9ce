#!/usr/bin/python3
"""DDP time per step on "chorus" and "gloo" in one run: every rank trains the same ~25M-parameter model
(examples/torch/ddp_train.py's) once under DDP over a chorus group and once over a gloo group of the same ranks,
alternating blocks of steps; medians per backend, and chorus's time over gloo's.

  /usr/bin/python3 perf/torch/ddp_bench.py -n 2 --batch 1
  /usr/bin/python3 perf/torch/ddp_bench.py -n 4 --batch 1 --rounds 3
"""

import argparse
import os
import statistics
import sys
import time

from side_by_side import join_both, spawn

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "torch"))

from ddp_train import batches, make_model, step  # noqa: E402


def rank_main(rank, args, init_file, results):
    n = args.nranks
    torch.set_num_threads(args.threads or max(1, (os.cpu_count() or 1) // n))
    groups = join_both(rank, n, init_file)
    runs = {}
    for name, group in groups.items():
        model = DDP(make_model(), process_group=group, bucket_cap_mb=args.bucket_mb)
        runs[name] = (model, torch.optim.SGD(model.parameters(), lr=0.01), batches(rank, args.batch), group)
    times = {name: [] for name in groups}
    for name, (model, opt, data, group) in runs.items():  # warm-up
        for _ in range(args.warmup):
            step(model, opt, next(data))
    for _ in range(args.rounds):
        for name, (model, opt, data, group) in runs.items():
            for _ in range(args.steps):
                dist.barrier(group=group)
                start = time.perf_counter()
                step(model, opt, next(data))
                times[name].append(time.perf_counter() - start)
    # Same data, same start, same order of steps: the two models must agree.
    a, b = (list(runs[name][0].parameters()) for name in ("chorus", "gloo"))
    drift = max(float((p - q).abs().max()) for p, q in zip(a, b))
    if rank == 0:
        results.put(({name: statistics.median(t) for name, t in times.items()}, drift,
                     sum(p.numel() for p in a), torch.get_num_threads()))
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", "--nranks", type=int, default=2)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--steps", type=int, default=5, help="steps per block")
    parser.add_argument("--rounds", type=int, default=4, help="alternating blocks per backend")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--bucket-mb", type=float, default=25, help="DDP's bucket_cap_mb")
    parser.add_argument("--threads", type=int, default=0, help="torch intra-op threads per rank (0: cores / ranks)")
    args = parser.parse_args()
    medians, drift, params, threads = spawn(rank_main, args, args.nranks)
    print(f"# DDP, {args.nranks} ranks, {params / 1e6:.1f}M parameters, batch {args.batch}, bucket {args.bucket_mb} MB, "
          f"{threads} threads per rank, {args.rounds} x {args.steps} steps per backend, alternating")
    for name, t in medians.items():
        print(f"  {name:<7} {t * 1e3:9.1f} ms per step")
    print(f"  chorus/gloo {medians['chorus'] / medians['gloo']:.3f}   max parameter difference {drift:.2e}")


if __name__ == "__main__":
    main()
