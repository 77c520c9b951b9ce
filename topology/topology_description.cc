#include "topology/topology_description.h"

#include <cstdio>
#include <map>
#include <sstream>

#include "core/byte_text.h"
#include "core/logging.h"
#include "topology/cpu_list.h"

namespace chorus {

namespace {

constexpr int kMaxHostsListed = 32;

std::string plural(long n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string cpusText(const std::vector<int>& cpus) { return cpus.empty() ? "none" : formatCpuList(cpus); }

std::string numaText(int node) { return node < 0 ? "NUMA node unknown" : "NUMA node " + std::to_string(node); }

std::string figure(double value) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3g", value);
  return buf;
}

}  // namespace

std::string describeHost(const HostTopology& host) {
  std::ostringstream out;
  uint64_t memory = 0;
  for (const NumaNode& n : host.numaNodes) memory += n.memoryBytes;
  out << "host " << (host.hostname.empty() ? "(unnamed)" : host.hostname) << " (" << host.source
      << "): " << plural(static_cast<long>(host.packages.size()), "package", "packages") << ", "
      << plural(static_cast<long>(host.numaNodes.size()), "NUMA node", "NUMA nodes") << ", "
      << plural(host.cores(), "core", "cores") << ", "
      << plural(host.hardwareThreads(), "hardware thread", "hardware threads") << ", " << formatBytes(memory)
      << " memory, " << plural(host.gpus(), "GPU", "GPUs") << ", "
      << plural(static_cast<long>(host.pciDevices.size()) - host.gpus(), "NIC", "NICs") << "\n";
  for (const CpuPackage& p : host.packages) {
    out << "  package " << p.id << ": CPUs " << cpusText(p.cpus) << ", " << plural(p.cores, "core", "cores") << "\n";
  }
  for (const NumaNode& n : host.numaNodes) {
    int package = host.packageOfNuma(n.id);
    out << "  NUMA node " << n.id << ": CPUs " << cpusText(n.cpus) << ", " << plural(n.cores, "core", "cores") << ", "
        << formatBytes(n.memoryBytes) << (package >= 0 ? ", package " + std::to_string(package) : "")
        << (n.cpus.empty() ? " (memory only)" : "") << "\n";
  }
  if (!host.caches.empty()) {
    out << "  caches:";
    for (size_t i = 0; i < host.caches.size(); ++i) {
      const CacheGroup& c = host.caches[i];
      out << (i ? ", " : " ") << "L" << c.level << " " << formatBytes(c.sizeBytes) << " x" << c.count;
    }
    out << "\n";
  }
  int gpu = 0;
  for (const PciDevice& d : host.pciDevices) {
    out << "  " << (d.kind == PciKind::kGpu ? "GPU " + std::to_string(gpu++) : std::string("NIC")) << ": " << d.busId;
    if (!d.vendorId.empty()) out << " [" << d.vendorId << ":" << d.deviceId << "]";
    if (!d.name.empty()) out << " " << d.name;
    for (const std::string& i : d.interfaces) out << " " << i;
    for (const std::string& r : d.rdmaDevices) out << " " << r << " (RDMA)";
    out << ", " << numaText(d.numaNode) << "\n";
  }
  for (const auto& [c, p] : host.linkOverrides) {
    out << "  link override " << linkClassName(c) << ": " << figure(p.latencyUs) << " us, " << figure(p.bandwidthGBs)
        << " GB/s\n";
  }
  if (host.fabric.hostsPerRack > 0) {
    out << "  fabric: racks of " << plural(host.fabric.hostsPerRack, "host", "hosts") << ", uplinks at "
        << figure(host.fabric.uplinkGBs) << " GB/s\n";
  }
  if (host.contextSwitchUs > 0) {
    out << "  scheduler: a step waits " << figure(host.contextSwitchUs) << " us per oversubscription of the cores\n";
  }
  return out.str();
}

std::string describeTopology(const GlobalTopology& world, const LinkModel& model) {
  std::ostringstream out;
  out << "topology: " << plural(world.nranks(), "rank", "ranks") << " on " << plural(world.nhosts(), "host", "hosts")
      << ", ";
  if (world.evenHosts()) {
    out << world.maxRanksPerHost() << " per host";
  } else {
    out << world.minRanksPerHost() << ".." << world.maxRanksPerHost() << " per host (uneven)";
  }
  std::vector<int> leaders = world.leaders();
  if (leaders.size() > 64) leaders.resize(64);
  out << "; leaders " << formatCpuList(leaders) << (world.nhosts() > 64 ? ",..." : "") << "\n";
  for (int h = 0; h < world.nhosts() && h < kMaxHostsListed; ++h) {
    const RankPlacement& lead = world.placement(world.ranksOnHost(h)[0]);
    out << "  host " << h << " '" << world.hostId(h) << "': ranks " << formatCpuList(world.ranksOnHost(h)) << "; "
        << plural(lead.hostNumaNodes, "NUMA node", "NUMA nodes") << ", " << plural(lead.hostGpus, "GPU", "GPUs")
        << (lead.hostCores > 0 ? ", " + plural(lead.hostCores, "core", "cores") : "")
        << (lead.hostRdma ? ", RDMA" : "");
    for (const std::vector<int>& group : world.numaGroups(h)) {
      out << "; " << numaText(world.placement(group[0]).numaNode) << ": ranks " << formatCpuList(group);
    }
    std::map<int, std::vector<int>> byGpu;
    for (int r : world.ranksOnHost(h)) {
      if (world.placement(r).gpu >= 0) byGpu[world.placement(r).gpu].push_back(r);
    }
    for (const auto& [gpu, ranks] : byGpu) out << "; GPU " << gpu << ": ranks " << formatCpuList(ranks);
    out << "\n";
  }
  if (world.nhosts() > kMaxHostsListed) out << "  ... and " << world.nhosts() - kMaxHostsListed << " more hosts\n";
  for (MemoryKind memory : {MemoryKind::kHost, MemoryKind::kDevice}) {
    std::vector<LinkClass> present = world.linkClassesPresent(memory);
    if (memory == MemoryKind::kDevice && present == world.linkClassesPresent(MemoryKind::kHost)) break;
    out << "  links (" << (memory == MemoryKind::kHost ? "host" : "GPU") << " buffers):";
    if (present.empty()) out << " none (one rank)";
    for (size_t i = 0; i < present.size(); ++i) {
      LinkClass c = present[i];
      auto pair = world.representativePair(c, memory);
      out << (i ? "; " : " ") << linkClassName(c) << " " << figure(model.params(c).latencyUs) << " us "
          << figure(model.params(c).bandwidthGBs) << " GB/s (" << linkSourceName(model.source(c)) << ", e.g. ranks "
          << pair->first << "-" << pair->second << ")";
    }
    out << "\n";
  }
  return out.str();
}

void logTopology(int rank, const HostTopology& host, const GlobalTopology& world, const LinkModel& model) {
  if (logLevel() < LogLevel::kInfo) return;
  auto logLines = [rank](const std::string& text) {
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) CHORUS_INFO(rank, line);
  };
  if (rank >= 0 && rank < world.nranks() && world.localIndex(rank) == 0) logLines(describeHost(host));
  if (rank == 0) logLines(describeTopology(world, model));
}

}  // namespace chorus
