#include "algorithms/algorithms.h"
#include "algorithms/hierarchical/hierarchical.h"
#include "algorithms/hierarchical/host_levels.h"
#include "core/datatype.h"

namespace chorus {

void hierarchicalBroadcast(PeerIO& io, const CallArgs& op) {
  HostLevels l = HostLevels::of(io, op.root);
  const bool amRoot = io.rank() == op.root;
  const bool acrossHosts = l.leaders.size() > 1;
  // 1. Among leaders, from the root (which leads its own host).
  if (l.isLeader && acrossHosts) {
    runLevel(io, l, l.leaders, true,
             CallArgs{.collective = Collective::kBroadcast,
                      .send = amRoot ? op.send : op.recv,
                      .recv = op.recv,
                      .count = op.count,
                      .type = op.type,
                      .root = l.rootHost,
                      .seq = op.seq});
  }
  // 2. Within each host, from its leader; the data is in the leader's recv unless step 1 did not run.
  if (l.local.size() > 1) {
    const void* src = amRoot && !acrossHosts ? op.send : op.recv;
    runLevel(io, l, l.local, false,
             CallArgs{.collective = Collective::kBroadcast,
                      .send = src,
                      .recv = op.recv,
                      .count = op.count,
                      .type = op.type,
                      .root = HostLevels::indexIn(l.local, l.myLeader),
                      .seq = op.seq});
  } else if (amRoot && !acrossHosts) {
    copyIfOutOfPlace(io, op.send, op.recv, op.count * typeSize(op.type));
  }
}

}  // namespace chorus
