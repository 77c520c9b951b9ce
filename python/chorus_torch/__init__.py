"""Chorus as a torch.distributed backend: ``import chorus_torch`` registers ``"chorus"``, then
``torch.distributed.init_process_group("chorus", ...)`` works like any other backend (CPU tensors)."""

import torch.distributed as _dist
import torch.distributed.distributed_c10d as _c10d

from chorus_torch import _C

BACKEND = "chorus"

if BACKEND.upper() not in _dist.Backend._plugins:  # importing twice must not fail
    _dist.Backend.register_backend(BACKEND, _C.create_process_group)

    # torch 1.13 lets monitored_barrier run on Gloo only, by name; the process group implements it, so chorus
    # groups go to it directly and every other backend keeps torch's own function.
    _torch_monitored_barrier = _c10d.monitored_barrier

    def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
        if str(_dist.get_backend(group)).lower() != BACKEND:
            return _torch_monitored_barrier(group, timeout, wait_all_ranks)
        pg = group if group is not None else _c10d._get_default_group()
        return pg.monitored_barrier(timeout if timeout is not None else _c10d.default_pg_timeout,
                                    wait_all_ranks=wait_all_ranks)

    monitored_barrier.__doc__ = _torch_monitored_barrier.__doc__
    _c10d.monitored_barrier = monitored_barrier
    _dist.monitored_barrier = monitored_barrier

__all__ = ["BACKEND"]
