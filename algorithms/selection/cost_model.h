// Predicted time of each algorithm (alpha-beta-gamma, after Thakur, Rabenseifner and Gropp), from the shape
// of the world and the cost of its links. The selector's defaults are the argmin of these predictions.
#pragma once

#include <cstddef>

#include "algorithms/algorithm_id.h"
#include "core/collective.h"

namespace chorus {

struct LinkCost {
  double latencyUs = 1.0;     // alpha: per message
  double bandwidthGBs = 1.0;  // 1/beta: per byte
  // A token bucket (topology/link_model.h's LinkParams): burstBytes pass at peakGBs while it is full. 0: none.
  double burstBytes = 0;
  double peakGBs = 0;
  // A message longer than frameBytes costs multiFrameUs more (topology/link_model.h's LinkParams). 0: none.
  double frameBytes = 0;
  double multiFrameUs = 0;
  // A streamed chain's first hop, measured (topology/link_model.h's LinkParams). 0: kChainFirstHop of the latency.
  double chainUs = 0;
};

struct CostInputs {
  int nranks = 1;
  int nhosts = 1;
  int maxRanksPerHost = 1;
  // More ranks than cores: every step waits for a context switch. A fraction where emulated hosts share a machine's
  // cores (4 hosts on 2 cores: 0.5), which also slows each host's part of calls streamed back to back.
  double coresPerHost = 1;
  LinkCost intraHost;          // between ranks of one host
  bool intraHostMemory = true;  // ranks of one host share memory (shm), rather than talk TCP over loopback
  LinkCost interHost;          // between hosts
  double reduceGBs = 12.0;     // gamma: reduction throughput of one core (AVX2 float sum, measured here)
  // What one step costs extra for each time the cores are oversubscribed (ranks / cores - 1): measured here as
  // 7-8 us per step at 4 and at 8 ranks on 2 cores.
  double contextSwitchUs = 7.5;
  size_t sliceBytes = 512 * 1024;
  // Racks (0: one switch): hosts in blocks of hostsPerRack share an uplink of rackUplinkGBs to the core switch.
  int hostsPerRack = 0;
  double rackUplinkGBs = 0;
};

// The flat worlds of a two-level collective's levels, as the cost model prices them and the selector chooses each
// level's algorithm: one host's ranks; and one rank per host, whose leaders, in an allreduce, still share their
// host's crowded cores (each of their steps waits for the scheduler as the host's other ranks' do).
CostInputs hostLevel(const CostInputs& world);
CostInputs leaderLevel(const CostInputs& world, Collective c);

// Predicted microseconds for `algorithm` running `collective` on `bytes` (the nccl-tests size: the whole
// buffer for allreduce, broadcast and reduce; all ranks' blocks for allgather and reduce-scatter).
// +infinity when the algorithm does not implement the collective or cannot help in this world.
double predictUs(Collective collective, AlgorithmId algorithm, size_t bytes, const CostInputs& in);

}  // namespace chorus
