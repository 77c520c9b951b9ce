#include "topology/global_topology.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "core/error.h"
#include "topology/host_blocks.h"

namespace chorus {

EmulatedHostShape EmulatedHostShape::of(const HostTopology& host) {
  EmulatedHostShape s;
  for (const NumaNode& n : host.numaNodes) {
    if (!n.cpus.empty()) s.numaIds.push_back(n.id);
  }
  if (s.numaIds.empty()) s.numaIds.push_back(host.numaNodes.empty() ? 0 : host.numaNodes.front().id);
  s.numaNodes = static_cast<int>(s.numaIds.size());
  s.gpus = host.gpus();
  s.rdma = host.hasRdma();
  s.cores = host.cores();
  if (!host.hostname.empty()) s.hostIdPrefix = host.hostname;
  return s;
}

GlobalTopology::GlobalTopology(std::vector<RankPlacement> placements) : placements_(std::move(placements)) {
  const size_t n = placements_.size();
  if (n == 0) throwInvalidArgument("a topology needs at least one rank");
  std::sort(placements_.begin(), placements_.end(), [](auto& a, auto& b) { return a.rank < b.rank; });
  for (size_t r = 0; r < n; ++r) {
    if (placements_[r].rank != static_cast<int>(r)) {
      throwInvalidArgument("placements of " + std::to_string(n) + " ranks must be ranks 0.." + std::to_string(n - 1) +
                           " once each; found rank " + std::to_string(placements_[r].rank) + " at position " +
                           std::to_string(r));
    }
  }
  hostOfRank_.resize(n);
  localIndex_.resize(n);
  std::unordered_map<std::string, int> hostIndex;
  for (size_t r = 0; r < n; ++r) {  // ascending ranks: hosts get their index from their lowest rank
    auto [it, added] = hostIndex.emplace(placements_[r].hostId, static_cast<int>(hosts_.size()));
    if (added) hosts_.push_back({placements_[r].hostId, {}, {}});
    Host& h = hosts_[static_cast<size_t>(it->second)];
    hostOfRank_[r] = it->second;
    localIndex_[r] = static_cast<int>(h.ranks.size());
    h.ranks.push_back(static_cast<int>(r));
  }
  maxPerHost_ = 0;
  minPerHost_ = static_cast<int>(n);
  for (Host& h : hosts_) {
    leaders_.push_back(h.ranks.front());
    maxPerHost_ = std::max(maxPerHost_, static_cast<int>(h.ranks.size()));
    minPerHost_ = std::min(minPerHost_, static_cast<int>(h.ranks.size()));
    std::map<int, size_t> groupOfNode;
    for (int r : h.ranks) {
      int node = placements_[static_cast<size_t>(r)].numaNode;
      auto [it, added] = groupOfNode.emplace(node, h.numa.size());
      if (added) h.numa.emplace_back();
      h.numa[it->second].push_back(r);
    }
  }
}

GlobalTopology GlobalTopology::emulated(int nranks, int nhosts, const EmulatedHostShape& shape) {
  if (shape.numaNodes < 1 || shape.gpus < 0 || shape.cores < 0) {
    throwInvalidArgument("an emulated host needs at least one NUMA node and no negative GPU or core counts");
  }
  if (!shape.numaIds.empty() && static_cast<int>(shape.numaIds.size()) != shape.numaNodes) {
    throwInvalidArgument("an emulated host of " + std::to_string(shape.numaNodes) +
                         " NUMA nodes needs as many ids, got " + std::to_string(shape.numaIds.size()));
  }
  std::vector<RankPlacement> placements;
  for (int h = 0; h < nhosts || h == 0; ++h) {
    HostBlock block = emulatedHostBlock(h, nranks, nhosts);  // validates nranks and nhosts
    const int nodes = std::min(shape.numaNodes, block.ranks);
    const int gpus = std::min(shape.gpus, block.ranks);
    for (int i = 0; i < block.ranks; ++i) {
      RankPlacement p;
      p.rank = block.firstRank + i;
      p.hostId = shape.hostIdPrefix + "#h" + std::to_string(h);
      int node = emulatedHostOf(i, block.ranks, nodes);
      p.numaNode = shape.numaIds.empty() ? node : shape.numaIds[static_cast<size_t>(node)];
      p.bound = true;
      // GPUs in blocks too: with GPUs numbered socket by socket (PCI order), a rank's GPU shares its NUMA node.
      p.gpu = gpus > 0 ? emulatedHostOf(i, block.ranks, gpus) : -1;
      p.hostNumaNodes = shape.numaNodes;
      p.hostGpus = shape.gpus;
      p.hostCores = shape.cores;
      p.hostRdma = shape.rdma;
      placements.push_back(std::move(p));
    }
  }
  return GlobalTopology(std::move(placements));
}

bool GlobalTopology::sameNuma(int a, int b) const {
  return sameHost(a, b) && placement(a).numaNode == placement(b).numaNode;
}

bool GlobalTopology::sameGpu(int a, int b) const {
  return sameHost(a, b) && placement(a).gpu >= 0 && placement(a).gpu == placement(b).gpu;
}

std::vector<int> GlobalTopology::ranksSharingNuma(int rank) const {
  std::vector<int> out;
  for (int r : localRanks(rank)) {
    if (sameNuma(rank, r)) out.push_back(r);
  }
  return out;
}

std::vector<int> GlobalTopology::ranksSharingGpu(int rank) const {
  std::vector<int> out;
  for (int r : localRanks(rank)) {
    if (sameGpu(rank, r)) out.push_back(r);
  }
  return out;
}

LinkClass GlobalTopology::linkBetween(int a, int b, MemoryKind memory) const {
  const RankPlacement& pa = placement(a);
  const RankPlacement& pb = placement(b);
  if (!sameHost(a, b)) {
    // A host's facts are its leader's word, so that every pair of two hosts gets the same class.
    bool rdma = placement(leaders_[static_cast<size_t>(hostOf(a))]).hostRdma &&
                placement(leaders_[static_cast<size_t>(hostOf(b))]).hostRdma;
    return rdma ? LinkClass::kRdma : LinkClass::kNetwork;
  }
  if (a != b && memory == MemoryKind::kDevice && pa.gpu >= 0 && pb.gpu >= 0) return LinkClass::kCudaIpc;
  return pa.numaNode == pb.numaNode ? LinkClass::kSameNuma : LinkClass::kCrossNuma;
}

std::optional<std::pair<int, int>> GlobalTopology::representativePair(LinkClass c, MemoryKind memory) const {
  // Linear in the ranks (worlds of thousands of ranks must not cost a scan of all pairs).
  auto ordered = [](int a, int b) { return std::pair(std::min(a, b), std::max(a, b)); };
  const bool device = memory == MemoryKind::kDevice;
  auto hasGpu = [&](int r) { return device && placement(r).gpu >= 0; };
  switch (c) {
    case LinkClass::kCudaIpc:
      for (const Host& h : hosts_) {
        int first = -1;
        for (int r : h.ranks) {
          if (!hasGpu(r)) continue;
          if (first >= 0) return ordered(first, r);
          first = r;
        }
      }
      return std::nullopt;
    case LinkClass::kSameNuma:
      // Two ranks of one node, not both on GPUs (with device buffers those use CUDA IPC).
      for (const Host& h : hosts_) {
        for (const std::vector<int>& group : h.numa) {
          if (group.size() < 2) continue;
          auto plain = std::find_if(group.begin(), group.end(), [&](int r) { return !hasGpu(r); });
          if (plain == group.end()) continue;
          return ordered(*plain, *plain == group[0] ? group[1] : group[0]);
        }
      }
      return std::nullopt;
    case LinkClass::kCrossNuma:
      for (const Host& h : hosts_) {
        if (h.numa.size() < 2) continue;
        for (size_t g = 0; g < h.numa.size(); ++g) {
          auto plain = std::find_if(h.numa[g].begin(), h.numa[g].end(), [&](int r) { return !hasGpu(r); });
          if (plain != h.numa[g].end()) return ordered(*plain, h.numa[g == 0 ? 1 : 0][0]);
        }
      }
      return std::nullopt;
    case LinkClass::kNetwork:
    case LinkClass::kRdma: {
      const bool rdma = c == LinkClass::kRdma;
      // kRdma: two RDMA hosts. kNetwork: a host without RDMA and any other host.
      int first = -1;
      for (int leader : leaders_) {
        if (placement(leader).hostRdma != rdma) continue;
        if (first >= 0) return ordered(first, leader);
        first = leader;
      }
      if (rdma || first < 0 || leaders_.size() < 2) return std::nullopt;
      return ordered(first, first == leaders_[0] ? leaders_[1] : leaders_[0]);
    }
  }
  return std::nullopt;
}

std::vector<LinkClass> GlobalTopology::linkClassesPresent(MemoryKind memory) const {
  std::vector<LinkClass> out;
  for (LinkClass c : kAllLinkClasses) {
    if (representativePair(c, memory)) out.push_back(c);
  }
  return out;
}

LinkClass GlobalTopology::intraHostLink(MemoryKind memory) const {
  for (LinkClass c : {LinkClass::kCrossNuma, LinkClass::kSameNuma, LinkClass::kCudaIpc}) {
    if (representativePair(c, memory)) return c;
  }
  return LinkClass::kSameNuma;
}

LinkClass GlobalTopology::interHostLink() const {
  if (nhosts() == 1) return placement(0).hostRdma ? LinkClass::kRdma : LinkClass::kNetwork;
  return representativePair(LinkClass::kNetwork) ? LinkClass::kNetwork : LinkClass::kRdma;
}

}  // namespace chorus
