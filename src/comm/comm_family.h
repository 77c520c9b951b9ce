// A communicator's place in its family: how it found its peers (its launch spec, whose store its relatives meet
// through), and the specs of the communicators made from it: split children, shrunk and grown successors, joiners.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/bootstrap/launch_spec.h"
#include "core/comm_config.h"
#include "src/comm/shrink_agreement.h"

namespace chorus {

class CommFamily {
 public:
  explicit CommFamily(const LaunchSpec& spec);

  const LaunchSpec& spec() const { return spec_; }
  // Names the communicator alike on every rank (its job and key prefix).
  const std::string& identity() const { return identity_; }

  // Every rank of the communicator takes a number per split, so the numbers agree.
  uint64_t nextSplit() { return splits_++; }
  // This rank's spec in the split child over `members` (ranks of this communicator, in the child's rank order)
  // named by `color`, of split number `split`.
  LaunchSpec splitChild(const std::vector<int>& members, int color, uint64_t split) const;
  // The next shrink's request (shrink_agreement.h): every caller of chorusCommShrink counts alike, so each shrink's
  // keys agree. excluded null: those gone are left out. who: "comm NAME: rank R" for messages.
  ShrinkRequest shrinkRequest(const std::vector<int>* excluded, const std::string& who);
  // This rank's spec among the `members` a shrink agreed on.
  LaunchSpec shrunkChild(const ShrinkRequest& request, const std::vector<int>& members) const;
  // The id new processes join with: this communicator's store, a fresh key prefix and this communicator's size.
  chorusUniqueId growId() const;
  // This rank's spec in the grown communicator, from rank 0's id; throws where the id was made for a communicator
  // of another size (commName names this one in the message).
  LaunchSpec grown(const chorusUniqueId& agreed, int newRanks, const std::string& commName) const;
  // A joiner's spec: rank `rank` of the id's communicator's size + newRanks.
  static LaunchSpec joiner(const chorusUniqueId& id, int newRanks, int rank);
  // Whether a child with the `child` settings can share connections made with the `parent` ones: the settings that
  // shaped them agree (config splitShare on both).
  static bool canShareConnections(const CommConfig& parent, const CommConfig& child);

 private:
  LaunchSpec spec_;  // serveStore off: the relatives find their peers through the same store
  std::string identity_;
  uint64_t splits_ = 0;
  uint64_t shrinks_ = 0;
};

}  // namespace chorus
