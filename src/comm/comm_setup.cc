#include "src/comm/comm_setup.h"

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <system_error>

#include "core/error.h"
#include "core/logging.h"
#include "src/comm/clock_offset.h"
#include "src/comm/link_probe.h"
#include "src/comm/staging_memory.h"
#include "topology/local_host.h"
#include "topology/rank_placement.h"
#include "topology/topology_description.h"
#include "transports/reserved_tags.h"

namespace chorus {

WorldView learnTopology(int rank, const CommConfig& config, const std::vector<PeerCard>& cards, CommIO& io,
                        Deadline deadline) {
  std::vector<RankPlacement> placements;
  for (const PeerCard& c : cards) placements.push_back(placementFromCard(c));
  WorldView view{std::make_unique<GlobalTopology>(std::move(placements)), linkModelOf(localHostTopology())};
  if (config.topoProbe) {
    io.beginUntracked(reserved_tags::kLinkProbe, LazyDeadline::at(deadline));
    view.links = probeLinkModel(io, *view.topology, view.links);
  }
  logTopology(rank, localHostTopology(), *view.topology, view.links);
  return view;
}

std::vector<std::vector<int>> hostsOf(const GlobalTopology& world) {
  std::vector<std::vector<int>> hosts;
  for (int h = 0; h < world.nhosts(); ++h) hosts.push_back(world.ranksOnHost(h));
  return hosts;
}

std::unique_ptr<CallPlanner> planCalls(int rank, const CommConfig& config, const WorldView& world,
                                       const PeerConnections& peers) {
  PlannerWorld w{*world.topology, world.links};
  w.sameHostOverNetwork = peers.sameHostOverNetwork();
  w.localRanks = peers.localRanks();
  w.maxSockets = peers.maxStripeWidth();
  for (const CacheGroup& c : localHostTopology().caches) {
    if (c.level == 2 && (w.coreCacheBytes == 0 || c.sizeBytes < w.coreCacheBytes)) w.coreCacheBytes = c.sizeBytes;
  }
  w.pipelineSlots = StagingMemory::kSlots;
  auto planner = std::make_unique<CallPlanner>(rank, config, w);
  if (logLevel() >= LogLevel::kInfo && rank == 0) {
    std::ostringstream table;
    planner->table().print(table);
    const CostInputs& in = planner->inputs();
    CHORUS_INFO(rank, "selection for " << peers.size() << " ranks on " << in.nhosts << " host(s), up to "
                                       << in.maxRanksPerHost << " per host:\n" << table.str()
                                       << "as CHORUS_ALGO: " << planner->table().asRules());
  }
  return planner;
}

std::unique_ptr<CallTrace> startTrace(const CommConfig& config, const std::string& keyPrefix,
                                      const PeerConnections& peers, CommIO& io, Deadline deadline) {
  const int rank = peers.rank(), size = peers.size();
  const std::vector<PeerCard>& cards = peers.cards();
  // Every rank works the list out alike from the cards, whether it traces or not: rank 0 answers the others.
  std::vector<int> measured;
  for (int p = 1; p < size; ++p) {
    if (cards[p].entries.count("trace") != 0 &&
        PeerConnections::machineOf(cards[p]) != PeerConnections::machineOf(cards[0])) {
      measured.push_back(p);
    }
  }
  double offsetUs = 0;
  if (!measured.empty()) {
    io.beginUntracked(reserved_tags::kClockOffset, LazyDeadline::at(deadline));
    offsetUs = measureClockOffsetUs(io, measured, &CallTrace::nowUs);
  }
  if (config.traceDir.empty()) return nullptr;
  std::error_code failed;
  std::filesystem::create_directories(config.traceDir, failed);
  if (failed) {
    throw Error(chorusInvalidArgument,
                withCommName(config.commName, errorContext(rank, "trace directory " + config.traceDir) +
                                                  " (CHORUS_TRACE): " + failed.message()));
  }
  const TraceLevel level = config.traceLevel == 1 ? TraceLevel::kTransfer : TraceLevel::kCall;
  auto trace = std::make_unique<CallTrace>(traceFilePath(config.traceDir, rank, keyPrefix), level, rank, size,
                                           config.commName);
  trace->setClockOffsetUs(offsetUs);
  io.setTrace(trace.get(), peers.transportNames());
  return trace;
}

void flushTrace(CallTrace* trace, int rank) noexcept {
  if (!trace) return;
  try {
    trace->flush();
  } catch (const std::exception& e) {
    CHORUS_WARN(rank, "trace not written: " << e.what());
  }
}

}  // namespace chorus
