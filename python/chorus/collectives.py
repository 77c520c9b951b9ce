"""The collectives, as methods of Comm. Every call takes numpy arrays, DLPack tensors or buffer protocol objects
(buffers.py); works in place unless given ``out=`` (a new array where a result has another size and none is given);
blocks and returns its result, or with ``async_op=True`` returns a Request whose wait() does; and with device
buffers is enqueued on ``stream`` (a CUDA stream; None: the legacy default stream)."""

import ctypes

from ._lib import lib
from .buffers import as_buffer, check_count, check_same, new_like, retyped
from .ops import ReduceOp, as_op


def _first_axis_split(call, buf, parts):
    """The shape of one of `parts` equal blocks of buf, cut along its first axis (or flat)."""
    shape = tuple(buf.shape)
    if shape and shape[0] % parts == 0:
        return (shape[0] // parts,) + shape[1:]
    if buf.count % parts == 0:
        return (buf.count // parts,)
    raise ValueError(f"{call}: {buf.count} elements do not split into {parts} equal blocks")


class Collectives:
    """Mixed into Comm, which provides _live, _submit, rank and size."""

    def allreduce(self, buf, op=ReduceOp.SUM, *, out=None, async_op=False, stream=None, dtype=None):
        """Every rank gets the element-wise reduction of every rank's buf: into buf, or into out. dtype (say
        "float8e4m3") reduces uint8 buffers as that one-byte type."""
        send = retyped("allreduce", as_buffer(buf, out is None, stream), dtype)
        recv = send
        if out is not None:
            recv = retyped("allreduce", as_buffer(out, True, stream), dtype)
            check_same("allreduce", "out", send, recv)
        return self._submit(lib.chorusAllReduce, (send.address, recv.address, send.count, send.dtype, as_op(op)),
                            (send, recv), recv.obj, async_op, stream)

    def broadcast(self, buf, root=0, *, out=None, async_op=False, stream=None):
        """Every rank gets root's buf: into buf, or into out (then buf is read on root only, and may be None
        elsewhere)."""
        if out is None:
            send = recv = as_buffer(buf, True, stream)
        else:
            recv = as_buffer(out, True, stream)
            send = recv
            if buf is not None and self.rank == root:
                send = as_buffer(buf, False, stream)
                check_same("broadcast", "out", send, recv)
        return self._submit(lib.chorusBroadcast, (send.address, recv.address, recv.count, recv.dtype, root),
                            (send, recv), recv.obj, async_op, stream)

    def reduce(self, buf, op=ReduceOp.SUM, root=0, *, out=None, async_op=False, stream=None, dtype=None):
        """Root gets the element-wise reduction of every rank's buf, into buf or out; returns it on root, None
        elsewhere. dtype as for allreduce."""
        at_root = self.rank == root
        send = retyped("reduce", as_buffer(buf, out is None and at_root, stream), dtype)
        recv = send
        if out is not None and at_root:
            recv = retyped("reduce", as_buffer(out, True, stream), dtype)
            check_same("reduce", "out", send, recv)
        return self._submit(lib.chorusReduce, (send.address, recv.address, send.count, send.dtype, as_op(op), root),
                            (send, recv), recv.obj if at_root else None, async_op, stream)

    def allgather(self, buf, *, out=None, async_op=False, stream=None):
        """out (size times buf's elements; new, shaped (size, *buf.shape), when None) gets every rank's buf in rank
        order."""
        send = as_buffer(buf, False, stream)
        recv = as_buffer(out if out is not None else new_like(send, (self.size,) + tuple(send.shape)), True, stream)
        check_count("allgather", "out", recv, send.dtype, send.count * self.size)
        return self._submit(lib.chorusAllGather, (send.address, recv.address, send.count, send.dtype),
                            (send, recv), recv.obj, async_op, stream)

    def reduce_scatter(self, buf, op=ReduceOp.SUM, *, out=None, async_op=False, stream=None, dtype=None):
        """Rank r's out gets block r of the element-wise reduction of every rank's buf (size equal blocks; out new,
        one block of buf's first axis, when None). dtype as for allreduce."""
        send = retyped("reduce_scatter", as_buffer(buf, False, stream), dtype)
        if out is None:
            out = new_like(send, _first_axis_split("reduce_scatter", send, self.size))
        recv = retyped("reduce_scatter", as_buffer(out, True, stream), dtype)
        check_count("reduce_scatter", "buf", send, recv.dtype, recv.count * self.size)
        return self._submit(lib.chorusReduceScatter, (send.address, recv.address, recv.count, recv.dtype, as_op(op)),
                            (send, recv), recv.obj, async_op, stream)

    def alltoall(self, buf, *, out=None, async_op=False, stream=None):
        """Block j of rank i's buf lands as block i of rank j's out (size equal blocks; out new, buf's shape, when
        None). Out of place only."""
        send = as_buffer(buf, False, stream)
        _first_axis_split("alltoall", send, self.size)
        recv = as_buffer(out if out is not None else new_like(send, tuple(send.shape)), True, stream)
        check_same("alltoall", "out", send, recv)
        return self._submit(lib.chorusAllToAll, (send.address, recv.address, send.count // self.size, send.dtype),
                            (send, recv), recv.obj, async_op, stream)

    def alltoallv(self, buf, send_counts, recv_counts, *, out=None, send_displs=None, recv_displs=None,
                  async_op=False, stream=None):
        """As MPI_Alltoallv: send_counts[j] elements from buf at send_displs[j] go to rank j, which receives them
        into out at its recv_displs[i]. Counts and displacements are in elements; displacements default to packed
        blocks in rank order; out new (1-D) when None. Rank i's send_counts[j] must equal rank j's recv_counts[i]."""
        send = as_buffer(buf, False, stream)
        sc, rc = self._per_rank("send_counts", send_counts), self._per_rank("recv_counts", recv_counts)
        sd = self._displacements("send_displs", send_displs, sc)
        rd = self._displacements("recv_displs", recv_displs, rc)
        if out is None:
            out = new_like(send, (max((d + c for d, c in zip(rd, rc)), default=0),))
        recv = as_buffer(out, True, stream)
        if recv.dtype != send.dtype:
            raise ValueError(f"alltoallv: out must be of buf's datatype ({send.dtype.name.lower()}), not "
                             f"{recv.dtype.name.lower()}")
        for name, counts, displs, b in (("buf", sc, sd, send), ("out", rc, rd, recv)):
            end = max((d + c for d, c in zip(displs, counts) if c), default=0)
            if end > b.count:
                raise ValueError(f"alltoallv: {name} has {b.count} elements; its counts and displacements reach {end}")
        arrays = [(ctypes.c_size_t * self.size)(*v) for v in (sc, sd, rc, rd)]
        return self._submit(lib.chorusAllToAllv, (send.address, arrays[0], arrays[1], recv.address, arrays[2],
                                                  arrays[3], send.dtype), (send, recv), recv.obj, async_op, stream)

    def _per_rank(self, name, values):
        values = [int(v) for v in values]
        if len(values) != self.size or min(values, default=0) < 0:
            raise ValueError(f"alltoallv: {name} needs {self.size} counts of at least 0, not {values}")
        return values

    def _displacements(self, name, displs, counts):
        if displs is None:
            out, at = [], 0
            for c in counts:
                out.append(at)
                at += c
            return out
        return self._per_rank(name, displs)

    def gather(self, buf, root=0, *, out=None, async_op=False, stream=None):
        """Root's out (size times buf's elements; new, shaped (size, *buf.shape), when None) gets every rank's buf
        in rank order; returns it on root, None elsewhere."""
        send = as_buffer(buf, False, stream)
        recv = None
        if self.rank == root:
            recv = as_buffer(out if out is not None else new_like(send, (self.size,) + tuple(send.shape)), True,
                             stream)
            check_count("gather", "out", recv, send.dtype, send.count * self.size)
        return self._submit(lib.chorusGather, (send.address, recv.address if recv else None, send.count, send.dtype,
                                               root), (send, recv or send), recv.obj if recv else None, async_op,
                            stream)

    def scatter(self, buf, root=0, *, out, async_op=False, stream=None):
        """Rank r's out gets block r of root's buf (size blocks of out's size); buf is read on root only and may
        be None elsewhere."""
        recv = as_buffer(out, True, stream)
        send = recv
        if self.rank == root:
            send = as_buffer(buf, False, stream)
            check_count("scatter", "buf", send, recv.dtype, recv.count * self.size)
        return self._submit(lib.chorusScatter, (send.address, recv.address, recv.count, recv.dtype, root),
                            (send, recv), recv.obj, async_op, stream)

    def barrier(self, *, async_op=False):
        """Returns once every rank has entered it."""
        return self._submit(lib.chorusBarrier, (), (), None, async_op, None)
