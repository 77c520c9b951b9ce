// What the topology tests share: where the example topology files live, and a rank placement in one line.
#pragma once

#include <string>

#include "topology/rank_placement.h"

namespace chorus::topology_test {

// The example and hostile topology files the tests load.
inline const std::string kDataDir = CHORUS_SOURCE_DIR "/tests/data/topology/";

// Rank `rank` on host `host`, NUMA node `numa`; with gpu >= 0, on that GPU of a host with eight, and with rdma a
// host with an RDMA device.
inline RankPlacement at(int rank, const std::string& host, int numa = 0, int gpu = -1, bool rdma = false) {
  RankPlacement p;
  p.rank = rank;
  p.hostId = host;
  p.numaNode = numa;
  p.gpu = gpu;
  p.hostGpus = gpu >= 0 ? 8 : 0;
  p.hostRdma = rdma;
  return p;
}

}  // namespace chorus::topology_test
