#include "algorithms/hierarchical/hierarchy.h"

#include <algorithm>

#include "core/error.h"

namespace chorus {

int Hierarchy::hostOf(int rank) const {
  for (size_t h = 0; h < hosts.size(); ++h) {
    if (std::binary_search(hosts[h].begin(), hosts[h].end(), rank)) return static_cast<int>(h);
  }
  throwInternal("rank " + std::to_string(rank) + " is on no host of the hierarchy");
}

bool Hierarchy::worthTwoLevels() const {
  if (hosts.size() < 2) return false;
  return std::any_of(hosts.begin(), hosts.end(), [](const std::vector<int>& h) { return h.size() > 1; });
}

}  // namespace chorus
