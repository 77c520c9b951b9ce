// Every algorithm, each a short script over PeerIO. The selector (selector.h) is the only caller.
#pragma once

#include "algorithms/collective.h"
#include "algorithms/peer_io.h"

namespace chorus {

// Reduce-scatter then allgather around the ring, pipelined in slices; bandwidth-optimal for large messages.
void ringAllReduce(PeerIO& io, const Op& op);
// Full-buffer exchanges with partners at distance 1, 2, 4, ... (fix-up for non-powers of two); latency-optimal.
void recursiveDoublingAllReduce(PeerIO& io, const Op& op);
// Ring reduce-scatter: rank r ends with block r of the reduction.
void ringReduceScatter(PeerIO& io, const Op& op);
// Ring allgather: each block travels n-1 hops.
void ringAllGather(PeerIO& io, const Op& op);
// Pipelined chain from the root along the ring.
void chainBroadcast(PeerIO& io, const Op& op);
// Pipelined chain along the ring ending at the root.
void chainReduce(PeerIO& io, const Op& op);

// The out-of-place copy every algorithm needs when a rank has nothing to exchange (a world of one).
void copyIfOutOfPlace(const void* send, void* recv, size_t bytes);

}  // namespace chorus
