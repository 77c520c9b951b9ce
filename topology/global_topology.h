// Every rank's placement, grouped into hosts and NUMA nodes: the same object on every rank of a communicator.
// The selector and hierarchical algorithms ask it who shares a host, who leads each host, and how two ranks
// are linked.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "topology/host_topology.h"
#include "topology/link_model.h"
#include "topology/rank_placement.h"

namespace chorus {

// Where a collective's buffers live: the link between two ranks depends on it (GPU buffers use CUDA IPC).
enum class MemoryKind { kHost, kDevice };

// What every host of an emulated world looks like.
struct EmulatedHostShape {
  int numaNodes = 1;         // each host's ranks are spread over this many nodes in contiguous blocks
  std::vector<int> numaIds;  // their ids, numaNodes of them; empty: 0..numaNodes-1
  int gpus = 0;              // each host's ranks drive its GPUs in contiguous blocks (one rank per GPU: rank i, GPU i)
  bool rdma = false;         // hosts reach each other over RDMA rather than TCP
  int cores = 0;             // cores per host (0: unknown)
  std::string hostIdPrefix = "emulated";  // host h is "<prefix>#h<h>"

  // The shape of `host`: its NUMA nodes with CPUs, GPUs, RDMA NICs and cores.
  static EmulatedHostShape of(const HostTopology& host);
};

class GlobalTopology {
 public:
  // From every rank's placement, in any order. Throws chorusInvalidArgument unless they are ranks 0..n-1 once each.
  explicit GlobalTopology(std::vector<RankPlacement> placements);

  // nranks split over nhosts hosts in contiguous blocks (the first nranks % nhosts hosts one rank larger, as
  // chorusrun --hosts does), each host of the given shape; host ids "<shape.hostIdPrefix>#h<k>". Throws
  // chorusInvalidArgument unless 1 <= nhosts <= nranks.
  static GlobalTopology emulated(int nranks, int nhosts, const EmulatedHostShape& shape = {});

  int nranks() const { return static_cast<int>(placements_.size()); }
  int nhosts() const { return static_cast<int>(hosts_.size()); }
  const RankPlacement& placement(int rank) const { return placements_.at(static_cast<size_t>(rank)); }

  // Index of rank's host; hosts are numbered in order of their lowest rank.
  int hostOf(int rank) const { return hostOfRank_.at(static_cast<size_t>(rank)); }
  // The id (CHORUS_HOST_ID / hostname + boot id) of host h.
  const std::string& hostId(int host) const { return hosts_.at(static_cast<size_t>(host)).id; }
  // Ranks of host h, ascending.
  const std::vector<int>& ranksOnHost(int host) const { return hosts_.at(static_cast<size_t>(host)).ranks; }
  // The lowest rank of each host, by host index.
  const std::vector<int>& leaders() const { return leaders_; }
  // Ranks on rank's host (itself included), ascending.
  const std::vector<int>& localRanks(int rank) const { return ranksOnHost(hostOf(rank)); }
  // Position of rank among localRanks(rank).
  int localIndex(int rank) const { return localIndex_.at(static_cast<size_t>(rank)); }
  int maxRanksPerHost() const { return maxPerHost_; }
  int minRanksPerHost() const { return minPerHost_; }
  // True when every host has the same number of ranks.
  bool evenHosts() const { return maxPerHost_ == minPerHost_; }

  bool sameHost(int a, int b) const { return hostOf(a) == hostOf(b); }
  // Same host and same NUMA node (two unknown nodes count as the same).
  bool sameNuma(int a, int b) const;
  // Same host and the same GPU (both have one).
  bool sameGpu(int a, int b) const;
  // Ranks on rank's host in its NUMA node (itself included), ascending.
  std::vector<int> ranksSharingNuma(int rank) const;
  // Ranks on rank's host driving its GPU (itself included), ascending; empty when rank has no GPU.
  std::vector<int> ranksSharingGpu(int rank) const;
  // NUMA nodes with ranks on host h, in order of their lowest rank; each with its ranks ascending.
  const std::vector<std::vector<int>>& numaGroups(int host) const { return hosts_.at(static_cast<size_t>(host)).numa; }

  // How a and b are linked: other host -> kRdma when both hosts have RDMA, else kNetwork; same host with device
  // buffers and both ranks on a GPU -> kCudaIpc; else kSameNuma / kCrossNuma. a == b gives kSameNuma.
  LinkClass linkBetween(int a, int b, MemoryKind memory = MemoryKind::kHost) const;
  // The link classes that occur between some pair of distinct ranks, in kAllLinkClasses order.
  std::vector<LinkClass> linkClassesPresent(MemoryKind memory = MemoryKind::kHost) const;
  // The class that bounds a ring within a host (for the cost model's intra-host link): kCrossNuma when some host's
  // ranks span NUMA nodes, else kSameNuma when some pair shares one, else kCudaIpc when only GPU pairs remain
  // (device buffers), else kSameNuma (no two ranks share a host).
  LinkClass intraHostLink(MemoryKind memory = MemoryKind::kHost) const;
  // The class between hosts (the cost model's inter-host link): kNetwork when some pair of hosts lacks RDMA, else
  // kRdma; with one host, what a second host like it would get.
  LinkClass interHostLink() const;
  // A fixed pair (lower rank first) linked by class c, the same on every rank; nullopt when no pair is.
  std::optional<std::pair<int, int>> representativePair(LinkClass c, MemoryKind memory = MemoryKind::kHost) const;

 private:
  struct Host {
    std::string id;
    std::vector<int> ranks;
    std::vector<std::vector<int>> numa;  // ranks grouped by NUMA node
  };

  std::vector<RankPlacement> placements_;  // by rank
  std::vector<Host> hosts_;
  std::vector<int> hostOfRank_;
  std::vector<int> localIndex_;
  std::vector<int> leaders_;
  int maxPerHost_ = 0;
  int minPerHost_ = 0;
};

}  // namespace chorus
