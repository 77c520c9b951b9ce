#include "algorithms/hierarchical/subgroup_io.h"

#include <algorithm>

#include "core/error.h"

namespace chorus {

SubgroupIO::SubgroupIO(PeerIO& parent, const std::vector<int>& members) : parent_(parent), members_(members) {
  auto it = std::find(members_.begin(), members_.end(), parent_.rank());
  if (it == members_.end()) throwInternal(errorContext(parent_.rank()) + ": this rank is not in its subgroup");
  index_ = static_cast<int>(it - members_.begin());
}

int SubgroupIO::global(int peer) const {
  if (peer < 0 || peer >= size()) {
    throwInternal(errorContext(parent_.rank()) + ": subgroup peer " + std::to_string(peer) + " outside a group of " +
                  std::to_string(size()));
  }
  return members_[peer];
}

Request SubgroupIO::isend(int peer, const void* buf, size_t bytes) { return parent_.isend(global(peer), buf, bytes); }

Request SubgroupIO::irecv(int peer, void* buf, size_t bytes) { return parent_.irecv(global(peer), buf, bytes); }

}  // namespace chorus
