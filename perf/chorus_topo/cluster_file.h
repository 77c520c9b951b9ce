// The cluster description chorus-topo --predict reads (JSON, format "chorus-cluster/1"): the shape of one host and
// of the fabric, from which the cost model's inputs follow for any number of hosts. Field by field:
//   format          "chorus-cluster/1" (required)
//   name            informational (optional)
//   ranks_per_host  ranks (GPUs, or processes) on each host (required)
//   cores_per_host  CPU cores per host (optional; default ranks_per_host: no oversubscription); a fraction where
//                   emulated hosts share a machine's cores (4 hosts on 2 cores: 0.5)
//   intra_host      {"latency_us", "bandwidth_gbs", "shared_memory": true}  one rank pair inside a host (optional;
//                   default: the library's same-NUMA figures, topology/link_model.cc)
//   nics_per_host   NICs per host (default 1); a peer pair across hosts stripes over all of them
//   nic             {"latency_us", "bandwidth_gbs"}  one NIC, one way (required); a shaped one adds "burst_bytes" and
//                   "peak_gbs": a token bucket of that many bytes, passed at the peak rate while full; and
//                   "frame_bytes" with "multi_frame_us": a message longer than one frame's payload costs that much
//                   more than the latency (the topology lab measures it; docs/cost_model.md); and "chain_us": a
//                   one-way message's time per call back to back, a streamed chain's first hop (the lab measures
//                   it; default 0.8 of the latency)
//   fabric          {"hosts_per_rack": N, "oversubscription": X} or {"hosts_per_rack": N, "uplink_gbs": Y}
//                   (optional; default one non-blocking switch)
//   reduce_gbs      reduction throughput of one rank (default 12: one CPU core, AVX2 float sum)
//   slice_bytes     the pipeline's slice (default 512 KiB)
//   context_switch_us  what a step costs extra per oversubscription of the cores (ranks / cores - 1) while a rank
//                   waits for the scheduler (default 7.5, measured on loopback here; the lab measures its own)
#pragma once

#include <string>
#include <string_view>

#include "algorithms/selection/cost_model.h"

namespace chorus::topo {

struct ClusterSpec {
  std::string name;
  int ranksPerHost = 1;
  double coresPerHost = 0;  // 0: one per rank; a fraction where hosts share a machine's cores
  LinkCost intraHost;
  bool sharedMemory = true;
  int nicsPerHost = 1;
  LinkCost nic;
  int hostsPerRack = 0;  // 0: one switch
  double uplinkGBs = 0;  // each rack's uplink
  double reduceGBs = 12.0;
  size_t sliceBytes = 512 * 1024;
  double contextSwitchUs = CostInputs{}.contextSwitchUs;

  // The cost model's inputs for `nranks` ranks filling hosts in blocks (the last host may be partial).
  CostInputs inputsFor(int nranks) const;
};

inline constexpr std::string_view kClusterFormat = "chorus-cluster/1";

// Parses a cluster description; throws chorusInvalidArgument "cluster JSON: <field>: <what is wrong>".
ClusterSpec parseClusterJson(std::string_view text);
// Reads and parses `path`; errors name the file.
ClusterSpec loadClusterFile(const std::string& path);

}  // namespace chorus::topo
