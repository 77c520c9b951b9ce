"""Chorus as a torch.distributed backend: ``import chorus_torch`` registers ``"chorus"``, then
``torch.distributed.init_process_group("chorus", ...)`` works like any other backend: CPU tensors, and CUDA
tensors where chorus_torch was built against a torch with CUDA (``cuda_tensors()``).

``dist.new_group(ranks)`` on a chorus default group splits its communicator (chorusCommSplit: the subgroup shares
the default group's connections, no new bootstrap); under any other default group it meets through the store."""

import inspect as _inspect

import torch.distributed as _dist
import torch.distributed.distributed_c10d as _c10d

from chorus_torch import _C

BACKEND = "chorus"
# chorusCommSplit's color for ranks that are not in the new group.
_NO_COLOR = -1


def _chorus_default_group():
    """The default group when it is a chorus group (subgroups split from it), else None."""
    if not _c10d.is_initialized():
        return None
    default = _c10d._get_default_group()
    return default if _C.is_chorus(default) else None


def _create(opts, pg_options=None):
    """What torch calls to make a chorus group (register_backend's extended API, which names the group's ranks)."""
    parent = _chorus_default_group()
    if opts.global_ranks_in_group and parent is not None:
        return _C.split(parent, 0, opts.group_rank, opts.timeout)
    return _C.create_process_group(opts.store, opts.group_rank, opts.group_size, opts.timeout)


if BACKEND.upper() not in _dist.Backend._plugins:  # importing twice must not fail
    _dist.Backend.register_backend(BACKEND, _create, extended_api=True)

    # torch 1.13 makes a subgroup only on its members; a split is collective over the parent, so the ranks left
    # out take part too (with no color) before torch returns NON_GROUP_MEMBER to them.
    _torch_new_group_helper = _c10d._new_process_group_helper
    _helper_signature = _inspect.signature(_torch_new_group_helper)

    def _new_process_group_helper(*args, **kwargs):
        bound = _helper_signature.bind(*args, **kwargs)
        bound.apply_defaults()
        a = bound.arguments
        parent = _chorus_default_group()
        if (str(a["backend"]).lower() == BACKEND and a["global_ranks_in_group"] and parent is not None
                and parent.rank() not in a["global_ranks_in_group"]):
            _C.split(parent, _NO_COLOR, 0, a["timeout"])
        return _torch_new_group_helper(*args, **kwargs)

    _c10d._new_process_group_helper = _new_process_group_helper

    # torch 1.13 lets monitored_barrier run on Gloo only, by name; the process group implements it, so chorus
    # groups go to it directly and every other backend keeps torch's own function.
    _torch_monitored_barrier = _c10d.monitored_barrier

    def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
        if _c10d._rank_not_in_group(group) or str(_dist.get_backend(group)).lower() != BACKEND:
            return _torch_monitored_barrier(group, timeout, wait_all_ranks)
        pg = group if group is not None else _c10d._get_default_group()
        return pg.monitored_barrier(timeout if timeout is not None else _c10d.default_pg_timeout,
                                    wait_all_ranks=wait_all_ranks)

    monitored_barrier.__doc__ = _torch_monitored_barrier.__doc__
    _c10d.monitored_barrier = monitored_barrier
    _dist.monitored_barrier = monitored_barrier

def _group_or_default(group):
    return group if group is not None else _c10d._get_default_group()


def flight_record(group=None, newest=0):
    """The flight recorder of a chorus group on this rank (docs/hangs.md): a dict with the group's identity, this
    rank, the recorder's clock and ``calls``, its last calls (``newest`` of them; 0: all it keeps), each with its
    number (``seq``), collective (``op``), bytes, algorithm, state (queued, running, waiting, done, failed), the rank
    a waiting call waits on and its times. Never waits for the group's work: a watchdog thread may call it."""
    import json
    return json.loads(_C.flight_record(_group_or_default(group), newest))


def dump_flight_record(group=None, path=None):
    """Writes the group's flight record on this rank to ``path`` (None: this rank's file in CHORUS_FLIGHT_DIR, where
    a failed or timed-out call has already left one); ``chorus-inspect --dumps DIR`` reads such files."""
    _C.dump_flight_record(_group_or_default(group), path or "")


def cuda_tensors():
    """True when this build takes CUDA tensors (it was built against a torch with CUDA)."""
    return _C.cuda_tensors()


def shrink(group=None, exclude=None, timeout=None):
    """chorusCommShrink: a new chorus group of the ranks that go on, in their old order.

    After an error (a rank lost), every surviving rank calls ``shrink(group)``: the group's pending work is aborted
    and the survivors agree among themselves on which ranks are gone. With ``exclude`` (ranks of ``group``, the
    same list on every caller), a healthy group leaves those ranks out; they do not call. The old group is of no
    further use after an error; use the returned one (``dist.all_reduce(t, group=new)``, ``DDP(...,
    process_group=new)``). Rank 0's loss cannot be survived: its process serves the group's rendezvous."""
    pg = group if group is not None else _c10d._get_default_group()
    return _C.shrink(pg, list(exclude or []), timeout if timeout is not None else _c10d.default_pg_timeout)


def grow_id(group=None):
    """On rank 0 of a chorus group: the id (bytes) new processes join a grown group with (chorusCommGetUniqueId)."""
    return _C.grow_id(group if group is not None else _c10d._get_default_group())


def grow(group, new_ranks, id=None, timeout=None):
    """chorusCommGrow by every rank of ``group`` (rank 0 passes ``grow_id(group)``; the others may pass None): a new
    group of the old ranks, then ``new_ranks`` processes that call ``join_grown``."""
    return _C.grow(group if group is not None else _c10d._get_default_group(), new_ranks, id or b"",
                   timeout if timeout is not None else _c10d.default_pg_timeout)


def join_grown(new_ranks, id, rank, store=None, timeout=None):
    """chorusCommGrow by a new process: rank ``rank`` of the grown group. ``store``: the job's torch store, for
    monitored barriers (without it they are refused)."""
    return _C.join_grown(new_ranks, id, rank, store, timeout if timeout is not None else _c10d.default_pg_timeout)


__all__ = ["BACKEND", "cuda_tensors", "shrink", "grow_id", "grow", "join_grown"]
