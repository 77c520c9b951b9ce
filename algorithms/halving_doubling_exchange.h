// The two moves every halving-doubling step is made of: swap ranges with a partner, or swap and reduce what
// arrives. Sizes must agree pairwise: what one side sends the other receives, in the same slices.
#pragma once

#include <cstddef>

#include "algorithms/peer_io.h"

namespace chorus {

// Two-way steps of at least this many bytes (the larger direction) start with a rendezvous: each side tells the
// other it has entered the step, and sends its bulk only once the partner said so. Without it a rank that finished
// its last step early (its send complete once buffered) goes on and sends its next step's bytes to a partner still
// receiving its previous step's: the two share that partner's link and the late rank falls further behind, so calls
// run well over their links' time (docs/cost_model.md, "Across hosts, step by step"). The rendezvous costs one small
// exchange: 2 ranks, where no third rank can crowd a partner's link, skip it (about 30 us of a 340 us 2-rank 1 MiB
// recursive doubling on loopback).
inline constexpr size_t kRendezvousBytes = 1024 * 1024;

// The rendezvous above for a step that sends sendBytes to `peer` and receives recvBytes from it: returns once the
// peer has entered the same step. Nothing for a one-way step (a scatter's sender posts and goes on, with no step
// of its own to enter), one under kRendezvousBytes, or among 2 ranks. The peer passes the same sizes, swapped.
void rendezvousForStep(PeerIO& io, int peer, size_t sendBytes, size_t recvBytes);

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
