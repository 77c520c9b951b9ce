#include "algorithms/algorithms.h"
#include "algorithms/hierarchical/hierarchical.h"
#include "algorithms/hierarchical/host_levels.h"
#include "core/datatype.h"

namespace chorus {

void hierarchicalReduce(PeerIO& io, const CallArgs& op) {
  HostLevels l = HostLevels::of(io, op.root);
  const bool amRoot = io.rank() == op.root;
  const bool average = op.reduction == chorusAvg;
  const chorusRedOp_t inner = average ? chorusSum : op.reduction;  // divide once, by the whole world, at the root
  const bool severalLocal = l.local.size() > 1;
  const bool acrossHosts = l.leaders.size() > 1;
  // A leader that is not the root keeps its host's result apart: its recv may be NULL (only the root's counts).
  void* hostResult =
      amRoot ? op.recv : (l.isLeader && severalLocal ? io.scratch(op.count * typeSize(op.type)) : nullptr);
  // 1. Within each host, to its leader.
  if (severalLocal) {
    runLevel(io, l, l.local, false,
             CallArgs{.collective = Collective::kReduce,
                      .send = op.send,
                      .recv = l.isLeader ? hostResult : nullptr,
                      .count = op.count,
                      .type = op.type,
                      .reduction = inner,
                      .root = HostLevels::indexIn(l.local, l.myLeader),
                      .seq = op.seq});
  }
  // 2. Among leaders, to the root.
  if (l.isLeader && acrossHosts) {
    const void* in = severalLocal ? hostResult : op.send;
    runLevel(io, l, l.leaders, true,
             CallArgs{.collective = Collective::kReduce,
                      .send = in,
                      .recv = amRoot ? op.recv : nullptr,
                      .count = op.count,
                      .type = op.type,
                      .reduction = inner,
                      .root = l.rootHost,
                      .seq = op.seq});
  }
  if (amRoot) {
    if (!severalLocal && !acrossHosts) copyIfOutOfPlace(io, op.send, op.recv, op.count * typeSize(op.type));
    if (average) io.reducer().finishAverage(op.recv, op.count, op.type, io.size());
  }
}

}  // namespace chorus
