// The tag each frame of a call carries, so that ranks which disagree about the call fail at its first frame: a
// signature of what was called (collective, datatype, op, root) mixed with how many calls the two ranks have
// made together. Collectives involve every pair; a point-to-point call only its pair, so counting per pair keeps
// both ends in step however calls between subsets of ranks interleave. Tags stay below the reserved ones.
#pragma once

#include <cstdint>
#include <vector>

#include "core/collective.h"

namespace chorus {

class CallTags {
 public:
  // nranks: the communicator's size. checking false: every frame carries tag 0 (the mismatch check is off; sizes
  // are still compared by the transports).
  CallTags(int nranks, bool checking);

  // Starts a call: op.peer < 0 is a collective (every pair takes part), else a point-to-point call with op.peer.
  void begin(const Op& op);
  // The current collective's number among the communicator's collectives (0 for the first): every rank makes the
  // same collectives in the same order, so this names a collective across ranks however many point-to-point calls
  // each made in between. The mismatch listing keys on it.
  uint64_t collectiveNumber() const { return collectives_ - 1; }
  // The tag of the current call's frames to and from `peer`.
  uint32_t tagFor(int peer) const {
    if (!checking_) return 0;
    const uint64_t together = collectives_ + pairCalls_[static_cast<size_t>(peer)];
    return fold(static_cast<uint32_t>((together & kSequenceMask) << kSignatureBits) | signature_);
  }

 private:
  static constexpr int kSignatureBits = 20;
  static constexpr uint64_t kSequenceMask = (uint64_t{1} << (32 - kSignatureBits)) - 1;
  // Call tags never reach the reserved range (transports/reserved_tags.h): the top bit goes there.
  static uint32_t fold(uint32_t tag);

  bool checking_;
  uint32_t signature_ = 0;                // kSignatureBits of the current call's hash
  uint64_t collectives_ = 0;              // collectives begun, the current one included
  std::vector<uint64_t> pairCalls_;       // [peer]: point-to-point calls with peer begun
};

}  // namespace chorus
