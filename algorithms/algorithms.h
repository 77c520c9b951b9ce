// Every algorithm, each a short script over PeerIO. The selector (selector.h) is the only caller.
#pragma once

#include "core/collective.h"
#include "algorithms/peer_io.h"

namespace chorus {

// Reduce-scatter then allgather around the ring, pipelined in slices; bandwidth-optimal for large messages.
void ringAllReduce(PeerIO& io, const CallArgs& op);
// Full-buffer exchanges with partners at distance 1, 2, 4, ... (fix-up for non-powers of two); latency-optimal.
void recursiveDoublingAllReduce(PeerIO& io, const CallArgs& op);
// Ring reduce-scatter: rank r ends with block r of the reduction.
void ringReduceScatter(PeerIO& io, const CallArgs& op);
// Ring allgather: each block travels n-1 hops.
void ringAllGather(PeerIO& io, const CallArgs& op);
// Pipelined chain from the root along the ring.
void chainBroadcast(PeerIO& io, const CallArgs& op);
// Pipelined chain along the ring ending at the root.
void chainReduce(PeerIO& io, const CallArgs& op);

// Double binary tree (tree_pipeline.h): each tree reduces half of the data to its root and broadcasts it back,
// pipelined in slices; log-depth latency with both directions of every link busy.
void treeAllReduce(PeerIO& io, const CallArgs& op);
// Both trees rooted at the root, which feeds each one half of the data, pipelined in slices.
void treeBroadcast(PeerIO& io, const CallArgs& op);
// Both trees rooted at the root, which collects each one's half, pipelined in slices.
void treeReduce(PeerIO& io, const CallArgs& op);

// Halving-doubling (Rabenseifner), with the fold fix-up for non-powers of two: recursive-halving reduce-scatter,
// then recursive-doubling allgather.
void halvingDoublingAllReduce(PeerIO& io, const CallArgs& op);
// Recursive halving: rank r ends with block r of the reduction.
void halvingDoublingReduceScatter(PeerIO& io, const CallArgs& op);
// Recursive doubling: log2(n) exchanges of doubling size.
void halvingDoublingAllGather(PeerIO& io, const CallArgs& op);
// Recursive halving, then a binomial gather to the root.
void halvingDoublingReduce(PeerIO& io, const CallArgs& op);
// Binomial scatter from the root, then recursive-doubling allgather (van de Geijn).
void halvingDoublingBroadcast(PeerIO& io, const CallArgs& op);

// Alltoall(v): every block posted at once in pairwise order (step s: send to r+s, receive from r-s).
void pairwiseAllToAll(PeerIO& io, const CallArgs& op);
void pairwiseAllToAllv(PeerIO& io, const CallArgs& op);
// Alltoall in ceil(log2 p) steps of half the data each (Bruck): for small blocks.
void bruckAllToAll(PeerIO& io, const CallArgs& op);
// Gather and scatter: the root posts one message per rank, all at once.
void directGather(PeerIO& io, const CallArgs& op);
void directScatter(PeerIO& io, const CallArgs& op);
// Gather and scatter along a binomial tree rooted at the root: log2(p) steps.
void binomialGather(PeerIO& io, const CallArgs& op);
void binomialScatter(PeerIO& io, const CallArgs& op);
// Barrier by dissemination: ceil(log2 p) rounds of empty messages to r+k, from r-k.
void disseminationBarrier(PeerIO& io, const CallArgs& op);

// The out-of-place copy every algorithm needs when a rank has nothing to exchange (a world of one); through
// io.copy(), so that it works on device buffers too.
void copyIfOutOfPlace(PeerIO& io, const void* send, void* recv, size_t bytes);

}  // namespace chorus
