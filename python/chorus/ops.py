"""Reduction operations (chorusRedOp_t), by constant or by name."""

import enum


class ReduceOp(enum.IntEnum):
    """chorusRedOp_t. BAND, BOR and BXOR are for the integer datatypes only."""
    SUM = 0
    PROD = 1
    MAX = 2
    MIN = 3
    AVG = 4
    BAND = 5
    BOR = 6
    BXOR = 7


# Every way to name an op, for a lookup per call: the members themselves (hash as their ints), lower-case names, and
# the spellings of numpy and torch.distributed.
_LOOKUP = {**{op: op for op in ReduceOp}, **{op.name.lower(): op for op in ReduceOp},
           "product": ReduceOp.PROD, "mean": ReduceOp.AVG, "maximum": ReduceOp.MAX, "minimum": ReduceOp.MIN}


def as_op(op):
    """The ReduceOp that op names: a ReduceOp, its int, or a name ("sum", "max", ...; any case)."""
    found = _LOOKUP.get(op)
    if found is None:
        found = _LOOKUP.get(op.lower()) if isinstance(op, str) else None
        if found is None:
            raise ValueError(f"unknown reduction op {op!r} (one of {', '.join(o.name.lower() for o in ReduceOp)})")
    return found
