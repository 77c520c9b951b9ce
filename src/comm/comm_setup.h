// The steps of a communicator's setup once it has connected: what it learns of the world (every rank's placement,
// the link model, the hosts), the call planner built on that, and its trace.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "algorithms/selection/call_planner.h"
#include "core/comm_config.h"
#include "core/deadline.h"
#include "src/comm/call_trace.h"
#include "src/comm/comm_io.h"
#include "src/comm/peer_connections.h"
#include "topology/global_topology.h"
#include "topology/link_model.h"

namespace chorus {

// What the cards and (config topoProbe) the link probe tell of the world; the planner's costs come from it.
struct WorldView {
  std::unique_ptr<GlobalTopology> topology;
  LinkModel links;
};

// Every rank's placement into the global view and the link model (probed through `io` when config topoProbe),
// logged. Every rank calls it: the probe is collective.
WorldView learnTopology(int rank, const CommConfig& config, const std::vector<PeerCard>& cards, CommIO& io,
                        Deadline deadline);
// The ranks of each host, as two-level algorithms group them (Hierarchy::hosts).
std::vector<std::vector<int>> hostsOf(const GlobalTopology& world);
// The world's cost inputs and the call planner (algorithms/selection/call_planner.h) built on them; rank 0 logs its
// decision table.
std::unique_ptr<CallPlanner> planCalls(int rank, const CommConfig& config, const WorldView& world,
                                       const PeerConnections& peers);
// The trace (config traceDir; null: not tracing): its file, each machine's clock offset to rank 0's (measured
// with the ranks that trace on other machines than rank 0's, as their cards say: every rank takes part) and
// io's transfer tracing.
std::unique_ptr<CallTrace> startTrace(const CommConfig& config, const std::string& keyPrefix,
                                      const PeerConnections& peers, CommIO& io, Deadline deadline);
// Writes the trace, if any; a failure is logged, never thrown (it runs at destroy).
void flushTrace(CallTrace* trace, int rank) noexcept;

}  // namespace chorus
