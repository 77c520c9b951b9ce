"""DDP on the "chorus" backend trains exactly as on Gloo: a small model, several gradient buckets, N steps; the
parameters agree across ranks and match Gloo's within float tolerance."""

import functools
import os
import tempfile

import pytest
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from world import run_world

STEPS = 6


def _train(rank, n, out_dir, backend, overlap):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.Tanh(), torch.nn.Linear(64, 64), torch.nn.Tanh(),
                                torch.nn.Linear(64, 8))
    # A tiny bucket cap: one bucket per parameter or two, allreduced while the backward pass goes on.
    ddp = DDP(model, bucket_cap_mb=0.004 if overlap else 25)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    g = torch.Generator().manual_seed(100 + rank)  # each rank its own data
    for _ in range(STEPS):
        x, y = torch.randn(16, 32, generator=g), torch.randn(16, 8, generator=g)
        opt.zero_grad()
        torch.nn.functional.mse_loss(ddp(x), y).backward()
        opt.step()
    torch.save([p.detach().clone() for p in ddp.parameters()], os.path.join(out_dir, f"{backend}-{rank}.pt"))


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("overlap", [True, False], ids=["small-buckets", "one-bucket"])
def test_ddp_matches_gloo_and_ranks_agree(n, overlap):
    with tempfile.TemporaryDirectory() as out:
        for backend in ("chorus", "gloo"):
            run_world(functools.partial(_train, out_dir=out, backend=backend, overlap=overlap), n, backend=backend)
        params = {(b, r): torch.load(os.path.join(out, f"{b}-{r}.pt")) for b in ("chorus", "gloo") for r in range(n)}
    reference = params[("gloo", 0)]
    start = torch.nn.Linear(32, 64)  # the training moved the parameters at all
    assert not torch.allclose(reference[0], start.weight)
    for r in range(n):
        for p, q in zip(params[("chorus", r)], params[("chorus", 0)]):
            assert torch.equal(p, q), f"rank {r} disagrees with rank 0 on chorus"
        for p, q in zip(params[("chorus", r)], reference):
            torch.testing.assert_close(p, q, rtol=1e-5, atol=1e-6)
