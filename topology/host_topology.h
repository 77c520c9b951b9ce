// What one host looks like: packages, NUMA nodes, caches, GPUs and NICs, and optional link-cost overrides.
// Filled by hwloc detection (topology_detector.h) or from a topology file (topology_json.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "topology/link_model.h"

namespace chorus {

struct CpuPackage {
  int id = 0;             // the OS's package (socket) number
  std::vector<int> cpus;  // OS numbers of its hardware threads, ascending
  int cores = 0;          // physical cores
  bool operator==(const CpuPackage&) const = default;
};

struct NumaNode {
  int id = 0;                // the OS's node number (as numactl and /sys/devices/system/node name it)
  std::vector<int> cpus;     // OS numbers of its hardware threads, ascending; empty for a memory-only node
  int cores = 0;             // physical cores
  uint64_t memoryBytes = 0;  // local memory
  bool operator==(const NumaNode&) const = default;
};

// Data or unified caches of one level and one size (hybrid CPUs have several sizes per level).
struct CacheGroup {
  int level = 0;           // 1, 2, 3 (4 on some)
  uint64_t sizeBytes = 0;  // of one cache
  int count = 0;           // how many such caches the host has
  bool operator==(const CacheGroup&) const = default;
};

enum class PciKind { kGpu, kNic };
// "gpu", "nic".
const char* pciKindName(PciKind k);

struct PciDevice {
  PciKind kind = PciKind::kNic;
  std::string busId;                     // "0000:3b:00.0"
  int numaNode = -1;                     // id of the NUMA node it hangs off; -1 when unknown or several
  std::string vendorId;                  // four lowercase hex digits, "10de"; "" when unknown
  std::string deviceId;                  // four lowercase hex digits; "" when unknown
  std::string name;                      // a human name when known ("" otherwise)
  std::vector<std::string> interfaces;   // NICs: network interfaces ("eth0")
  std::vector<std::string> rdmaDevices;  // NICs: RDMA devices ("mlx5_0"); non-empty means RDMA capable
  bool operator==(const PciDevice&) const = default;
};

struct HostTopology {
  std::string source;    // how it was obtained: "hwloc 2.9.0", "fallback (...)", or what the file says
  std::string hostname;  // informational
  std::vector<CpuPackage> packages;
  std::vector<NumaNode> numaNodes;                // ascending id
  std::vector<CacheGroup> caches;                 // ascending level, then size
  std::vector<PciDevice> pciDevices;              // ascending bus id: GPU index g is the g-th GPU here (PCI bus order)
  std::map<LinkClass, LinkParams> linkOverrides;  // from a topology file's "links"
  RackFabric fabric;                              // from a topology file's "fabric"; never detected
  // From a topology file's "scheduler": what a step waits for the scheduler per oversubscription of the cores
  // (the cost model's contextSwitchUs); 0: the model's own figure. Never detected.
  double contextSwitchUs = 0;

  bool operator==(const HostTopology&) const = default;

  // Physical cores of the host (sum over packages).
  int cores() const;
  // Hardware threads of the host (sum over packages).
  int hardwareThreads() const;
  // Number of GPUs.
  int gpus() const;
  // True when some NIC has an RDMA device.
  bool hasRdma() const;
  // The NUMA node with this id; nullptr when there is none.
  const NumaNode* numaNode(int id) const;
  // Id of the NUMA node whose CPUs include `cpu`; -1 when none does.
  int numaNodeOfCpu(int cpu) const;
  // Id of the package that holds all of the node's CPUs; -1 when none or several (or the node has no CPUs).
  int packageOfNuma(int numaId) const;
  // The GPUs, in index order.
  std::vector<const PciDevice*> gpuDevices() const;
};

// The default link model with the topology's "links" overrides applied (source kFile).
LinkModel linkModelOf(const HostTopology& host);

// 1 package, 1 NUMA node holding CPUs 0..cpus-1 as cores, `memoryBytes` of memory; what Chorus assumes when it
// cannot detect anything better.
HostTopology minimalHostTopology(int cpus, uint64_t memoryBytes, const std::string& source);

}  // namespace chorus
