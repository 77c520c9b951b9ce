// The two groups a rank belongs to in a two-level collective: the ranks of its host, and one leader per host.
#pragma once

#include <vector>

#include "algorithms/hierarchical/hierarchy.h"
#include "algorithms/peer_io.h"

namespace chorus {

struct HostLevels {
  const Hierarchy* hierarchy = nullptr;
  std::vector<int> local;    // the ranks of this rank's host, ascending
  std::vector<int> leaders;  // one rank per host, by host index: the lowest, or `root` on the root's host
  int myLeader = -1;         // the leader of this rank's host
  int rootHost = -1;         // the host index of `root` (-1 without a root)
  bool isLeader = false;

  // Levels for a call on `io` (which must carry a Hierarchy); root = -1 for allreduce.
  static HostLevels of(PeerIO& io, int root);
  // The index of `rank` within `group` (which holds it).
  static int indexIn(const std::vector<int>& group, int rank);
};

// Runs `op` (in group numbering: op.root indexes `group`) over the ranks of `group` with the flat algorithm
// the hierarchy picks for that level.
void runLevel(PeerIO& io, const HostLevels& levels, const std::vector<int>& group, bool acrossHosts,
              const CallArgs& op);

}  // namespace chorus
