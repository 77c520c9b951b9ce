// What a two-level algorithm needs to know about the world: which ranks share a host, and how to pick the
// flat algorithm for each level.
#pragma once

#include <functional>
#include <vector>

#include "algorithms/algorithm_registry.h"
#include "core/collective.h"

namespace chorus {

struct Hierarchy {
  // Ranks grouped by host: each group ascending, groups ordered by their lowest rank; every rank once.
  std::vector<std::vector<int>> hosts;
  // The flat algorithm for `op` over a group of `groupSize` ranks, within one host or across hosts.
  std::function<AlgorithmFn(const CallArgs& op, int groupSize, bool acrossHosts)> chooseFlat;

  // The index of the host group holding `rank`.
  int hostOf(int rank) const;
  // True when a two-level algorithm has something to gain: several hosts, and some host with several ranks.
  bool worthTwoLevels() const;
};

}  // namespace chorus
