#!/usr/bin/python3
"""Elastic data-parallel training on the "chorus" backend, as Horovod's elastic mode does it: when a rank is lost
mid-step, the survivors shrink their group (chorus_torch.shrink), roll back to the last committed step, rescale the
learning rate to the smaller global batch, and go on. (Growing back, chorus_torch.grow and join_grown, needs a
restarted process: chorus-faults elastic shows it in C.)

  chorusrun --elastic -n 3 /usr/bin/python3 examples/torch/elastic_train.py --lose-rank 1 --lose-at 5

(chorusrun --elastic lets the others run when a rank is killed, and serves the rendezvous outside the ranks, so
any rank may be lost, rank 0 included.) Each rank prints one line per event; every survivor prints the same final
parameter checksum, which is how to see that they stayed in step. Chorus is found in the build tree, or through
PYTHONPATH=PREFIX/lib/python3/dist-packages once installed.
"""

import argparse
import os
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "build", "python"))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

import chorus_torch  # noqa: E402


def make_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 256))


def average_gradients(model, group):
    """Horovod's DistributedOptimizer in a few lines: one fused allreduce of every gradient, averaged."""
    grads = [p.grad for p in model.parameters()]
    flat = torch.cat([g.reshape(-1) for g in grads])
    dist.all_reduce(flat, op=dist.ReduceOp.AVG, group=group)
    offset = 0
    for g in grads:
        g.copy_(flat[offset:offset + g.numel()].view_as(g))
        offset += g.numel()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--lose-rank", type=int, default=-1, help="this rank is SIGKILLed (no goodbye)")
    parser.add_argument("--lose-at", type=int, default=5, help="at the start of this step")
    parser.add_argument("--init-file", default="", help="torch's rendezvous file (default: /tmp/chorus-elastic-JOB)")
    args = parser.parse_args()
    rank, world = int(os.environ["CHORUS_RANK"]), int(os.environ["CHORUS_WORLD_SIZE"])
    init_file = args.init_file or f"/tmp/chorus-elastic-{os.environ.get('CHORUS_JOB_ID', 'job')}"
    dist.init_process_group("chorus", init_method="file://" + init_file, rank=rank, world_size=world)
    group = dist.group.WORLD
    torch.set_num_threads(1)
    model = make_model()
    base_lr = 0.01
    optimizer = torch.optim.SGD(model.parameters(), lr=base_lr * world)  # linear scaling: lr ~ global batch
    generator = torch.Generator().manual_seed(rank)
    committed = {k: v.clone() for k, v in model.state_dict().items()}
    step = 0
    while step < args.steps:
        if rank == args.lose_rank and step == args.lose_at:
            print(f"rank {rank}: killed at step {step}", flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
        x, y = torch.randn(32, 256, generator=generator), torch.randn(32, 256, generator=generator)
        try:
            optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            average_gradients(model, group)
            optimizer.step()
            committed = {k: v.clone() for k, v in model.state_dict().items()}
            step += 1
        except RuntimeError as error:
            failed = time.monotonic()
            before = group.size()
            group = chorus_torch.shrink(group)  # the survivors agree on who is gone
            model.load_state_dict(committed)  # the failed step never happened
            for g in optimizer.param_groups:
                g["lr"] = base_lr * group.size()
            print(f"rank {rank}: step {step} failed ({str(error).splitlines()[0][:120]}...); shrank from {before} "
                  f"to {group.size()} ranks in {(time.monotonic() - failed) * 1e3:.1f} ms, lr now "
                  f"{optimizer.param_groups[0]['lr']:.3f}; going on as rank {group.rank()}", flush=True)
    checksum = torch.cat([p.detach().reshape(-1) for p in model.parameters()]).double().sum().item()
    print(f"rank {rank}: finished {step} steps on {group.size()} ranks; parameter checksum {checksum:.6f}",
          flush=True)
    if group.rank() == 0 and os.path.exists(init_file):
        os.unlink(init_file)  # a lost rank never tells torch's file store it is done with the file


if __name__ == "__main__":
    main()
