#!/usr/bin/python3
"""DDP training of a ~25M-parameter MLP on random data, on any torch.distributed backend; prints the time per step
and the share of it that communication takes (steps with gradient sync against steps without, under no_sync()).

  torchrun --nproc_per_node 2 -r 1 -t 1 examples/torch/ddp_train.py --backend chorus
  torchrun --nproc_per_node 2 -r 1 -t 1 examples/torch/ddp_train.py --backend gloo

(`-r 1 -t 1`: Debian 12's torchrun breaks on Python 3.11 with its default log redirection.) Chorus is found in the
build tree, or through PYTHONPATH=PREFIX/lib/python3/dist-packages once installed.
"""

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "build", "python"))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

WIDTH, HIDDEN = 1024, 4096  # 1024x4096 + 4096x4096 + 4096x1024 weights: 25.2M parameters


def make_model(seed=0):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(WIDTH, HIDDEN), torch.nn.ReLU(), torch.nn.Linear(HIDDEN, HIDDEN),
                               torch.nn.ReLU(), torch.nn.Linear(HIDDEN, WIDTH))


def batches(rank, batch, seed=1):
    """Each rank's own reproducible stream of (input, target) pairs."""
    g = torch.Generator().manual_seed(seed * 1000 + rank)
    while True:
        yield torch.randn(batch, WIDTH, generator=g), torch.randn(batch, WIDTH, generator=g)


def step(model, optimizer, data):
    x, y = data
    optimizer.zero_grad(set_to_none=False)
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    return loss


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", default="chorus", help="chorus, gloo, ...")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--threads", type=int, default=0, help="torch intra-op threads per rank (0: cores / ranks)")
    args = parser.parse_args()
    if args.backend == "chorus":
        import chorus_torch  # noqa: F401  (registers the backend)
    dist.init_process_group(args.backend)  # env:// under torchrun
    rank, n = dist.get_rank(), dist.get_world_size()
    torch.set_num_threads(args.threads or max(1, (os.cpu_count() or 1) // n))
    model = DDP(make_model())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    data = batches(rank, args.batch)
    params = sum(p.numel() for p in model.parameters())

    def timed(steps, sync):
        times = []
        for _ in range(steps):
            dist.barrier()
            start = time.perf_counter()
            if sync:
                loss = step(model, optimizer, next(data))
            else:
                with model.no_sync():
                    loss = step(model, optimizer, next(data))
            times.append(time.perf_counter() - start)
        return statistics.median(times), loss

    timed(args.warmup, True)
    with_sync, loss = timed(args.steps, True)
    without_sync, _ = timed(max(3, args.steps // 2), False)
    if rank == 0:
        share = max(0.0, 1 - without_sync / with_sync)
        print(f"backend {args.backend}: {n} ranks, {params / 1e6:.1f}M parameters, batch {args.batch}, "
              f"{torch.get_num_threads()} threads per rank")
        print(f"  time per step {with_sync * 1e3:.1f} ms (median of {args.steps}); without gradient sync "
              f"{without_sync * 1e3:.1f} ms; communication share {share * 100:.0f}%; last loss {loss.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
