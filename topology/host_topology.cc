#include "topology/host_topology.h"

#include <algorithm>

namespace chorus {

const char* pciKindName(PciKind k) { return k == PciKind::kGpu ? "gpu" : "nic"; }

int HostTopology::cores() const {
  int n = 0;
  for (const CpuPackage& p : packages) n += p.cores;
  return n;
}

int HostTopology::hardwareThreads() const {
  size_t n = 0;
  for (const CpuPackage& p : packages) n += p.cpus.size();
  return static_cast<int>(n);
}

int HostTopology::gpus() const {
  return static_cast<int>(
      std::count_if(pciDevices.begin(), pciDevices.end(), [](const PciDevice& d) { return d.kind == PciKind::kGpu; }));
}

bool HostTopology::hasRdma() const {
  return std::any_of(pciDevices.begin(), pciDevices.end(),
                     [](const PciDevice& d) { return d.kind == PciKind::kNic && !d.rdmaDevices.empty(); });
}

const NumaNode* HostTopology::numaNode(int id) const {
  for (const NumaNode& n : numaNodes) {
    if (n.id == id) return &n;
  }
  return nullptr;
}

int HostTopology::numaNodeOfCpu(int cpu) const {
  for (const NumaNode& n : numaNodes) {
    if (std::binary_search(n.cpus.begin(), n.cpus.end(), cpu)) return n.id;
  }
  return -1;
}

int HostTopology::packageOfNuma(int numaId) const {
  const NumaNode* node = numaNode(numaId);
  if (!node || node->cpus.empty()) return -1;
  for (const CpuPackage& p : packages) {
    if (std::includes(p.cpus.begin(), p.cpus.end(), node->cpus.begin(), node->cpus.end())) return p.id;
  }
  return -1;
}

std::vector<const PciDevice*> HostTopology::gpuDevices() const {
  std::vector<const PciDevice*> out;
  for (const PciDevice& d : pciDevices) {
    if (d.kind == PciKind::kGpu) out.push_back(&d);
  }
  return out;
}

LinkModel linkModelOf(const HostTopology& host) {
  LinkModel model;
  for (const auto& [c, p] : host.linkOverrides) model.set(c, p, LinkSource::kFile);
  model.setFabric(host.fabric);
  model.setContextSwitchUs(host.contextSwitchUs);
  return model;
}

HostTopology minimalHostTopology(int cpus, uint64_t memoryBytes, const std::string& source) {
  HostTopology t;
  t.source = source;
  std::vector<int> all(static_cast<size_t>(std::max(cpus, 1)));
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  t.packages.push_back({0, all, static_cast<int>(all.size())});
  t.numaNodes.push_back({0, all, static_cast<int>(all.size()), memoryBytes});
  return t;
}

}  // namespace chorus
