#include "algorithms/algorithms.h"
#include "algorithms/hierarchical/hierarchical.h"
#include "algorithms/hierarchical/host_levels.h"
#include "src/core/datatype.h"

namespace chorus {

void hierarchicalBroadcast(PeerIO& io, const Op& op) {
  HostLevels l = HostLevels::of(io, op.root);
  const bool amRoot = io.rank() == op.root;
  const bool acrossHosts = l.leaders.size() > 1;
  // 1. Among leaders, from the root (which leads its own host).
  if (l.isLeader && acrossHosts) {
    runLevel(io, l, l.leaders, true,
             Op{Collective::kBroadcast, amRoot ? op.send : op.recv, op.recv, op.count, op.type, chorusSum,
                l.rootHost, op.seq});
  }
  // 2. Within each host, from its leader; the data is in the leader's recv unless step 1 did not run.
  if (l.local.size() > 1) {
    const void* src = amRoot && !acrossHosts ? op.send : op.recv;
    runLevel(io, l, l.local, false,
             Op{Collective::kBroadcast, src, op.recv, op.count, op.type, chorusSum,
                HostLevels::indexIn(l.local, l.myLeader), op.seq});
  } else if (amRoot && !acrossHosts) {
    copyIfOutOfPlace(io, op.send, op.recv, op.count * typeSize(op.type));
  }
}

}  // namespace chorus
