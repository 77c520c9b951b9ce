#include "algorithms/hierarchical/hierarchical.h"

#include "algorithms/algorithms.h"
#include "algorithms/hierarchical/host_levels.h"
#include "core/datatype.h"

namespace chorus {

void hierarchicalAllReduce(PeerIO& io, const CallArgs& op) {
  HostLevels l = HostLevels::of(io, -1);
  const bool average = op.reduction == chorusAvg;
  const chorusRedOp_t inner = average ? chorusSum : op.reduction;  // divide once, by the whole world, at the end
  const bool severalLocal = l.local.size() > 1;
  // 1. Within the host, to the leader (its lowest rank). recv holds the host's partial result on the leader.
  if (severalLocal) {
    runLevel(io, l, l.local, false,
             CallArgs{.collective = Collective::kReduce,
                      .send = op.send,
                      .recv = op.recv,
                      .count = op.count,
                      .type = op.type,
                      .reduction = inner,
                      .root = 0,
                      .seq = op.seq});
  }
  // 2. Among leaders, in place on the host results.
  if (l.isLeader) {
    const void* in = severalLocal ? op.recv : op.send;
    if (l.leaders.size() > 1) {
      runLevel(io, l, l.leaders, true,
               CallArgs{.collective = Collective::kAllReduce,
                        .send = in,
                        .recv = op.recv,
                        .count = op.count,
                        .type = op.type,
                        .reduction = inner,
                        .seq = op.seq});
    } else if (!severalLocal) {
      copyIfOutOfPlace(io, op.send, op.recv, op.count * typeSize(op.type));
    }
    if (average) io.reducer().finishAverage(op.recv, op.count, op.type, io.size());
  }
  // 3. Within the host, from the leader.
  if (severalLocal) {
    runLevel(io, l, l.local, false,
             CallArgs{.collective = Collective::kBroadcast,
                      .send = op.recv,
                      .recv = op.recv,
                      .count = op.count,
                      .type = op.type,
                      .root = 0,
                      .seq = op.seq});
  }
}

}  // namespace chorus
