#include "algorithms/hierarchical/host_levels.h"

#include <algorithm>

#include "algorithms/hierarchical/subgroup_io.h"
#include "core/error.h"

namespace chorus {

HostLevels HostLevels::of(PeerIO& io, int root) {
  HostLevels l;
  l.hierarchy = io.hierarchy();
  if (!l.hierarchy) throwInternal(errorContext(io.rank()) + ": a two-level algorithm ran without hosts");
  const auto& hosts = l.hierarchy->hosts;
  const int me = io.rank();
  const int myHost = l.hierarchy->hostOf(me);
  l.rootHost = root >= 0 ? l.hierarchy->hostOf(root) : -1;
  l.local = hosts[myHost];
  for (size_t h = 0; h < hosts.size(); ++h) {
    l.leaders.push_back(static_cast<int>(h) == l.rootHost ? root : hosts[h].front());
  }
  l.myLeader = l.leaders[myHost];
  l.isLeader = l.myLeader == me;
  return l;
}

int HostLevels::indexIn(const std::vector<int>& group, int rank) {
  auto it = std::find(group.begin(), group.end(), rank);
  if (it == group.end()) throwInternal("rank " + std::to_string(rank) + " missing from its level");
  return static_cast<int>(it - group.begin());
}

void runLevel(PeerIO& io, const HostLevels& levels, const std::vector<int>& group, bool acrossHosts,
              const CallArgs& op) {
  SubgroupIO sub(io, group);
  AlgorithmFn fn = levels.hierarchy->chooseFlat(op, static_cast<int>(group.size()), acrossHosts);
  fn(sub, op);
}

}  // namespace chorus
