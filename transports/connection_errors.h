// The failures every connection reports, worded once: each throws a chorus::Error with its code and Failure kind,
// naming this rank and the peer (errorContext) and, where it helps, the connection's description.
#pragma once

#include <climits>
#include <cstdint>
#include <string>

#include "core/error.h"

namespace chorus::connection_errors {

// The peer's process is gone (`what`: how this side noticed, with the system's own text where there is one).
[[noreturn]] void peerLost(int rank, int peer, const std::string& description, const std::string& what);
// How an abandon note carries the rank whose loss made a side give up (shm producer line, TCP abandon frame): the
// rank + 1, 0 for none; a value no rank gives reads as none.
inline uint64_t lostPeerNote(int lostPeer) { return static_cast<uint64_t>(lostPeer + 1); }
inline int lostPeerOfNote(uint64_t note) {
  return note > 0 && note <= static_cast<uint64_t>(INT32_MAX) ? static_cast<int>(note) - 1 : kNoRank;
}
// The peer abandoned the communicator after an error or an abort of its own; `lostPeer`: the rank whose loss made
// it give up, when it said (kNoRank otherwise). Then the error is that loss (Failure::kPeerLost, naming it).
[[noreturn]] void peerGaveUp(int rank, int peer, int lostPeer);
// The peer's message for this receive has another size or call tag: the ranks called different things.
[[noreturn]] void mismatchedMessage(int rank, int peer, uint64_t sentBytes, uint32_t sentTag, uint64_t expectedBytes,
                                    uint32_t expectedTag, const std::string& where);
// The peer destroyed its communicator while this side still had traffic with it (`what`: "still expected data
// from it" or "still had data for it").
[[noreturn]] void peerClosedEarly(int rank, int peer, const std::string& what);
// Something no correct peer sends (`what`: what is wrong with it).
[[noreturn]] void corrupt(int rank, int peer, const std::string& description, const std::string& what);

}  // namespace chorus::connection_errors
