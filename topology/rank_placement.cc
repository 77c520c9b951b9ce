#include "topology/rank_placement.h"

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <memory>

#include "core/error.h"
#include "core/params.h"
#include "topology/cpu_list.h"
#include "topology/host_topology_check.h"

namespace chorus {

namespace {

constexpr int kMaxGpus = 1024;

// The CPUs this thread may run on, ascending; empty when the kernel will not say.
std::vector<int> affinityCpus() {
  constexpr int kCpus = kMaxCpuIndex + 1;
  std::unique_ptr<cpu_set_t, void (*)(cpu_set_t*)> set(CPU_ALLOC(kCpus), [](cpu_set_t* s) { CPU_FREE(s); });
  std::vector<int> out;
  if (!set) return out;
  const size_t bytes = CPU_ALLOC_SIZE(kCpus);
  CPU_ZERO_S(bytes, set.get());
  if (sched_getaffinity(0, bytes, set.get()) != 0) return out;
  for (int c = 0; c < kCpus; ++c) {
    if (CPU_ISSET_S(static_cast<size_t>(c), bytes, set.get())) out.push_back(c);
  }
  return out;
}

// CHORUS_LOCAL_RANK when it is a plain non-negative integer; -1 otherwise (it is informational).
int localRankFromEnvironment() {
  if (!params::isSet("CHORUS_LOCAL_RANK")) return -1;
  std::string text = params::localRank();
  int value = -1;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size() && value >= 0 ? value : -1;
}

int numaNodesWithCpus(const HostTopology& host) {
  return static_cast<int>(
      std::count_if(host.numaNodes.begin(), host.numaNodes.end(), [](const NumaNode& n) { return !n.cpus.empty(); }));
}

// Strict decimal integer in [lo, hi] (no sign but '-', no spaces, no hex); throws chorusRemoteError otherwise.
int cardInteger(const PeerCard& card, const char* key, int lo, int hi, int otherwise) {
  auto it = card.entries.find(key);
  if (it == card.entries.end()) return otherwise;
  const std::string& text = it->second;
  long long value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < lo || value > hi) {
    std::string shown = printable(text, 32);  // whatever a peer sent
    throw Error(chorusRemoteError, "peer card of rank " + std::to_string(card.rank) + ": " + key + "='" + shown +
                                       "' is not an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                                       "]");
  }
  return static_cast<int>(value);
}

}  // namespace

RankPlacement localPlacement(int rank, const std::string& hostId, const HostTopology& host) {
  RankPlacement p;
  p.rank = rank;
  p.hostId = hostId;
  p.hostNumaNodes = std::max(1, numaNodesWithCpus(host));
  p.hostGpus = host.gpus();
  p.hostCores = host.cores();
  p.hostRdma = host.hasRdma();
  int cpu = sched_getcpu();
  p.cpu = cpu >= 0 && cpu <= kMaxCpuIndex ? cpu : -1;
  // sched_getaffinity/sched_getcpu are what hwloc's get_cpubind/get_last_cpu_location call on Linux; asking the
  // kernel directly keeps this cheap per communicator and works for a topology read from a file as well.
  std::vector<int> allowed = affinityCpus();
  for (const NumaNode& n : host.numaNodes) {
    if (!allowed.empty() && !n.cpus.empty() &&
        std::includes(n.cpus.begin(), n.cpus.end(), allowed.begin(), allowed.end())) {
      p.numaNode = n.id;
      p.bound = true;
      break;
    }
  }
  if (p.numaNode < 0 && p.cpu >= 0) p.numaNode = host.numaNodeOfCpu(p.cpu);
  if (p.numaNode < 0 && host.numaNodes.size() == 1) p.numaNode = host.numaNodes.front().id;
  int localRank = localRankFromEnvironment();
  if (p.hostGpus > 0 && localRank >= 0) p.gpu = localRank % p.hostGpus;
  return p;
}

void addPlacement(PeerCard& card, const RankPlacement& p) {
  card.entries["topo.numa"] = std::to_string(p.numaNode);
  card.entries["topo.cpu"] = std::to_string(p.cpu);
  card.entries["topo.bound"] = std::to_string(p.bound ? 1 : 0);
  card.entries["topo.gpu"] = std::to_string(p.gpu);
  card.entries["topo.numas"] = std::to_string(p.hostNumaNodes);
  card.entries["topo.gpus"] = std::to_string(p.hostGpus);
  card.entries["topo.cores"] = std::to_string(p.hostCores);
  card.entries["topo.rdma"] = std::to_string(p.hostRdma ? 1 : 0);
}

void addPlacement(PeerCard& card, const HostTopology& host) {
  addPlacement(card, localPlacement(card.rank, card.hostId, host));
}

RankPlacement placementFromCard(const PeerCard& card) {
  RankPlacement p;
  p.rank = card.rank;
  p.hostId = card.hostId;
  p.numaNode = cardInteger(card, "topo.numa", -1, kMaxNumaId, -1);
  p.cpu = cardInteger(card, "topo.cpu", -1, kMaxCpuIndex, -1);
  p.bound = cardInteger(card, "topo.bound", 0, 1, 0) == 1;
  p.gpu = cardInteger(card, "topo.gpu", -1, kMaxGpus - 1, -1);
  p.hostNumaNodes = cardInteger(card, "topo.numas", 1, kMaxTopologyEntries, 1);
  p.hostGpus = cardInteger(card, "topo.gpus", 0, kMaxGpus, 0);
  p.hostCores = cardInteger(card, "topo.cores", 0, kMaxCpuIndex + 1, 0);
  p.hostRdma = cardInteger(card, "topo.rdma", 0, 1, 0) == 1;
  if (p.gpu >= p.hostGpus && p.gpu >= 0) {
    throw Error(chorusRemoteError, "peer card of rank " + std::to_string(card.rank) +
                                       ": topo.gpu=" + std::to_string(p.gpu) + " but its host has " +
                                       std::to_string(p.hostGpus) + " GPUs (topo.gpus)");
  }
  return p;
}

}  // namespace chorus
