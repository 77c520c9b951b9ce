// The tag each frame of a call carries, so that ranks which disagree about the call fail at its first frame: a
// signature of what was called (collective, datatype, op, root) mixed with how many calls have gone that way
// between the two ranks. Collectives involve every pair in both directions; a point-to-point call only its pair,
// in the directions it uses, counted apart: rank a's k-th send to b meets b's k-th receive from a, whatever order
// each posts its sends and receives in (as NCCL groups allow). Tags stay below the reserved ones.
#pragma once

#include <cstdint>
#include <vector>

#include "core/collective.h"

namespace chorus {

class CallTags {
 public:
  // nranks: the communicator's size. checking false: every frame carries tag 0 (the mismatch check is off; sizes
  // are still compared by the transports). salt: mixed into every signature (communicators that share connections
  // pass different salts, so that one's frame never passes for another's).
  CallTags(int nranks, bool checking, uint64_t salt = 0);

  // Starts a collective (op.peer < 0): every pair takes part, both ways.
  void begin(const CallArgs& op);
  // Starts a point-to-point call with op.peer that sends to it, receives from it, or both. Its signature is the
  // datatype's alone, so that the send on one end and the receive on the other agree.
  void beginPointToPoint(const CallArgs& op, bool sends, bool receives);
  // The current collective's number among the communicator's collectives (0 for the first): every rank makes the
  // same collectives in the same order, so this names a collective across ranks however many point-to-point calls
  // each made in between. The mismatch listing keys on it.
  uint64_t collectiveNumber() const { return collectives_ - 1; }
  // The tag the next point-to-point receive of `type` from `peer` will expect (nothing is counted): what a receive
  // from any peer looks for at the head of each connection.
  uint32_t nextRecvTag(int peer, chorusDataType_t type) const {
    return tagFor(recvs_[static_cast<size_t>(peer)] + 1, pointToPointSignature(type));
  }
  // The tags of the current call's frames to `peer` and from it.
  uint32_t sendTag(int peer) const { return tag(sends_[static_cast<size_t>(peer)]); }
  uint32_t recvTag(int peer) const { return tag(recvs_[static_cast<size_t>(peer)]); }

 private:
  static constexpr int kSignatureBits = 20;
  static constexpr uint64_t kSequenceMask = (uint64_t{1} << (32 - kSignatureBits)) - 1;
  // Call tags never reach the reserved range (transports/reserved_tags.h): the top bit goes there.
  static uint32_t fold(uint32_t tag);
  uint32_t tag(uint64_t pointToPointCalls) const { return tagFor(pointToPointCalls, signature_); }
  uint32_t tagFor(uint64_t pointToPointCalls, uint32_t signature) const {
    if (!checking_) return 0;
    const uint64_t together = collectives_ + pointToPointCalls;
    return fold(static_cast<uint32_t>((together & kSequenceMask) << kSignatureBits) | signature);
  }
  // A point-to-point call's signature: one kind for both ends and the datatype, what a send and the receive it
  // meets agree on.
  uint32_t pointToPointSignature(chorusDataType_t type) const;

  bool checking_;
  uint64_t salt_;                // mixed into every signature: communicators sharing connections differ
  uint32_t signature_ = 0;       // kSignatureBits of the current call's hash
  uint64_t collectives_ = 0;     // collectives begun, the current one included
  std::vector<uint64_t> sends_;  // [peer]: point-to-point calls begun that send to peer
  std::vector<uint64_t> recvs_;  // [peer]: point-to-point calls begun that receive from peer
};

}  // namespace chorus
