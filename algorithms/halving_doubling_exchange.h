// The two moves every halving-doubling step is made of: swap ranges with a partner, or swap and reduce what
// arrives. Sizes must agree pairwise: what one side sends the other receives, in the same slices.
#pragma once

#include <cstddef>

#include "algorithms/peer_io.h"

namespace chorus {

// Sends sendBytes from sendData to peer and receives recvBytes from peer into recvData (either may be 0: nothing
// is posted for it), and waits for both.
void exchangeWithPeer(PeerIO& io, int peer, const void* sendData, size_t sendBytes, void* recvData, size_t recvBytes);

// Sends giveElems elements from give to peer while receiving keepElems from it into landing, and as each slice
// (io.sliceBytes()) arrives reduces it: out = landing op mine. out may alias mine or landing. Waits for everything.
// Both directions travel in slices, so the peer's side of it must be an exchangeAndReduce too (with the sizes
// swapped); a rank that only hands data over passes keepElems 0.
void exchangeAndReduce(PeerIO& io, int peer, const char* give, size_t giveElems, char* landing, const char* mine,
                       char* out, size_t keepElems, chorusDataType_t type, chorusRedOp_t op);

}  // namespace chorus
