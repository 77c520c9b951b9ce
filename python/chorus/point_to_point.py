"""Send and receive, as methods of Comm. A rank's sends to a peer meet that peer's receives from it in call order,
with equal datatype and count. Outside a group each call blocks until its transfer is done (so a pair that sends
to each other first needs a group, or async_op)."""

import ctypes

from ._lib import lib
from .buffers import as_buffer
from .request import Later


class PointToPoint:
    """Mixed into Comm, which provides _submit."""

    def send(self, buf, peer, *, async_op=False, stream=None):
        """Sends buf to rank peer."""
        b = as_buffer(buf, False, stream)
        return self._submit(lib.chorusSend, (b.address, b.count, b.dtype, peer), (b,), None, async_op, stream)

    def recv(self, buf, peer, *, async_op=False, stream=None):
        """Receives rank peer's next send into buf; returns buf."""
        b = as_buffer(buf, True, stream)
        return self._submit(lib.chorusRecv, (b.address, b.count, b.dtype, peer), (b,), buf, async_op, stream)

    def recv_any(self, buf, *, async_op=False):
        """Receives the next send of whichever rank's comes first into buf (MPI_ANY_SOURCE); returns that rank.
        Host buffers only, never inside a group."""
        b = as_buffer(buf, True)
        source = ctypes.c_int(-1)
        # The library writes the rank when the call completes; a Request reads it in wait().
        done = self._submit(lib.chorusRecvAny, (b.address, b.count, b.dtype, ctypes.byref(source)), (b,),
                            Later(lambda: source.value), async_op, None)
        return done if async_op else source.value
