#include "topology/host_topology_check.h"

#include <cmath>
#include <map>
#include <set>

#include "core/error.h"

namespace chorus {

namespace {

[[noreturn]] void broken(const std::string& where, const std::string& what) {
  throwInvalidArgument(where + ": " + what);
}

std::string at(const char* list, size_t i) { return std::string(list) + "[" + std::to_string(i) + "]"; }

bool isHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

void checkText(const std::string& where, const std::string& text, size_t maxBytes) {
  if (text.size() > maxBytes) broken(where, "longer than " + std::to_string(maxBytes) + " bytes");
  for (unsigned char c : text) {
    if (c < 0x20 || c == 0x7f) broken(where, "contains a control character");
  }
}

void checkDeviceName(const std::string& where, const std::string& name) {
  if (name.empty() || name.size() > 64) broken(where, "a device name must have 1..64 characters");
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
              c == '.' || c == ':' || c == '@';
    if (!ok) broken(where, "'" + printable(name) + "' has a character other than letters, digits and _-.:@");
  }
}

// Cores must fit the hardware threads: at least one per non-empty CPU set, at most one per thread.
void checkCores(const std::string& where, int cores, size_t cpus) {
  if (cpus == 0 && cores != 0) broken(where + ".cores", "is " + std::to_string(cores) + " but the entry has no CPUs");
  if (cpus > 0 && (cores < 1 || static_cast<size_t>(cores) > cpus)) {
    broken(where + ".cores", "is " + std::to_string(cores) + " but must be in 1.." + std::to_string(cpus) +
                                 " (the entry has " + std::to_string(cpus) + " CPUs)");
  }
}

// Records each CPU's owner; throws when a CPU already has one.
void claimCpus(const std::string& where, const std::vector<int>& cpus, std::map<int, std::string>* owners) {
  for (int c : cpus) {
    auto [it, inserted] = owners->emplace(c, where);
    if (!inserted) broken(where + ".cpus", "CPU " + std::to_string(c) + " is also in " + it->second);
  }
}

}  // namespace

std::string printable(std::string_view text, size_t maxBytes) {
  std::string out(text.substr(0, maxBytes));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  }
  if (text.size() > maxBytes) out += "...";
  return out;
}

bool isPciBusId(const std::string& busId) {
  size_t colon = busId.find(':');
  if (colon == std::string::npos || colon < 4 || colon > 8) return false;
  // dddd : bb : dd . f
  if (busId.size() != colon + 8) return false;
  for (size_t i = 0; i < busId.size(); ++i) {
    char c = busId[i];
    if (i == colon || i == colon + 3) {
      if (c != ':') return false;
    } else if (i == colon + 6) {
      if (c != '.') return false;
    } else if (!isHex(c)) {
      return false;
    }
  }
  return busId.back() <= '7';  // a PCI function number is 0..7
}

void validateHostTopology(const HostTopology& t) {
  checkText("source", t.source, kMaxTopologyText);
  checkText("hostname", t.hostname, kMaxTopologyText);

  if (t.packages.empty()) broken("packages", "must list at least one package");
  if (t.packages.size() > kMaxTopologyEntries) broken("packages", "more than " + std::to_string(kMaxTopologyEntries));
  std::set<int> packageIds;
  std::map<int, std::string> packageCpus;
  int packageCores = 0;
  for (size_t i = 0; i < t.packages.size(); ++i) {
    const CpuPackage& p = t.packages[i];
    const std::string where = at("packages", i);
    if (p.id < 0 || p.id > kMaxPackageId) broken(where + ".id", "must be in 0.." + std::to_string(kMaxPackageId));
    if (!packageIds.insert(p.id).second) broken(where + ".id", std::to_string(p.id) + " is used twice");
    claimCpus(where, p.cpus, &packageCpus);
    checkCores(where, p.cores, p.cpus.size());
    packageCores += p.cores;
  }

  if (t.numaNodes.empty()) broken("numa", "must list at least one NUMA node");
  if (t.numaNodes.size() > kMaxTopologyEntries) broken("numa", "more than " + std::to_string(kMaxTopologyEntries));
  std::set<int> numaIds;
  std::map<int, std::string> numaCpus;
  int numaCores = 0;
  for (size_t i = 0; i < t.numaNodes.size(); ++i) {
    const NumaNode& n = t.numaNodes[i];
    const std::string where = at("numa", i);
    if (n.id < 0 || n.id > kMaxNumaId) broken(where + ".id", "must be in 0.." + std::to_string(kMaxNumaId));
    if (!numaIds.insert(n.id).second) broken(where + ".id", std::to_string(n.id) + " is used twice");
    claimCpus(where, n.cpus, &numaCpus);
    for (int c : n.cpus) {
      if (!packageCpus.count(c)) broken(where + ".cpus", "CPU " + std::to_string(c) + " is in no package");
    }
    checkCores(where, n.cores, n.cpus.size());
    if (n.memoryBytes > kMaxMemoryBytes) broken(where + ".memory_bytes", "is implausibly large");
    numaCores += n.cores;
  }
  for (const auto& [cpu, owner] : packageCpus) {
    if (!numaCpus.count(cpu)) broken(owner + ".cpus", "CPU " + std::to_string(cpu) + " is in no NUMA node");
  }
  if (numaCores != packageCores) {
    broken("numa",
           "the nodes have " + std::to_string(numaCores) + " cores but the packages " + std::to_string(packageCores));
  }

  if (t.caches.size() > kMaxTopologyEntries) broken("caches", "more than " + std::to_string(kMaxTopologyEntries));
  std::set<std::pair<int, uint64_t>> cacheKeys;
  for (size_t i = 0; i < t.caches.size(); ++i) {
    const CacheGroup& c = t.caches[i];
    const std::string where = at("caches", i);
    if (c.level < 1 || c.level > 5) broken(where + ".level", "must be in 1..5");
    if (c.sizeBytes < 1 || c.sizeBytes > kMaxCacheBytes) broken(where + ".size_bytes", "must be in 1..2^40");
    if (c.count < 1 || c.count > 1 << 20) broken(where + ".count", "must be in 1..2^20");
    if (!cacheKeys.insert({c.level, c.sizeBytes}).second) {
      broken(where, "level " + std::to_string(c.level) + " with this size is listed twice");
    }
  }

  if (t.pciDevices.size() > kMaxTopologyEntries) broken("pci", "more than " + std::to_string(kMaxTopologyEntries));
  std::set<std::string> busIds;
  for (size_t i = 0; i < t.pciDevices.size(); ++i) {
    const PciDevice& d = t.pciDevices[i];
    const std::string where = at("pci", i);
    if (!isPciBusId(d.busId)) {
      broken(where + ".bus_id", "'" + printable(d.busId) + "' is not a PCI address like 0000:3b:00.0 (lowercase hex)");
    }
    if (!busIds.insert(d.busId).second) broken(where + ".bus_id", d.busId + " is listed twice");
    if (d.numaNode != -1 && !numaIds.count(d.numaNode)) {
      broken(where + ".numa", std::to_string(d.numaNode) + " is not the id of a listed NUMA node (nor -1)");
    }
    for (const auto& [field, value] : {std::pair{".vendor_id", &d.vendorId}, std::pair{".device_id", &d.deviceId}}) {
      bool ok = value->empty() || (value->size() == 4 && isHex((*value)[0]) && isHex((*value)[1]) &&
                                   isHex((*value)[2]) && isHex((*value)[3]));
      if (!ok) broken(where + field, "must be 4 lowercase hex digits like 10de");
    }
    checkText(where + ".name", d.name, kMaxTopologyText);
    if (d.kind == PciKind::kGpu && (!d.interfaces.empty() || !d.rdmaDevices.empty())) {
      broken(where, "a gpu has no network interfaces or RDMA devices");
    }
    for (const auto& [field, names] : {std::pair{".interfaces", &d.interfaces}, std::pair{".rdma", &d.rdmaDevices}}) {
      if (names->size() > kMaxDeviceNames) broken(where + field, "more than " + std::to_string(kMaxDeviceNames));
      for (size_t k = 0; k < names->size(); ++k) {
        checkDeviceName(where + field + "[" + std::to_string(k) + "]", (*names)[k]);
      }
    }
  }

  if (t.fabric.hostsPerRack < 0) broken("fabric.hosts_per_rack", "must be 1 or more");
  if (t.fabric.hostsPerRack > 0 &&
      (!std::isfinite(t.fabric.uplinkGBs) || !(t.fabric.uplinkGBs > 0) || t.fabric.uplinkGBs > 1e6)) {
    broken("fabric.uplink_gbs", "must be a finite number in (0, 1e6]");
  }
  if (!std::isfinite(t.contextSwitchUs) || t.contextSwitchUs < 0 || t.contextSwitchUs > 1e6) {
    broken("scheduler.context_switch_us", "must be a finite number in 0..1e6");
  }
  for (const auto& [c, p] : t.linkOverrides) {
    const std::string where = std::string("links.") + linkClassName(c);
    if (!std::isfinite(p.latencyUs) || p.latencyUs < 0 || p.latencyUs > 1e7) {
      broken(where + ".latency_us", "must be a finite number in 0..1e7");
    }
    if (!std::isfinite(p.bandwidthGBs) || !(p.bandwidthGBs > 0) || p.bandwidthGBs > 1e6) {
      broken(where + ".bandwidth_gbs", "must be a finite number in (0, 1e6]");
    }
    // The figures that may be 0 (not modelled) up to a bound.
    const struct {
      double value;
      const char* name;
      const char* range;
      double most;
    } optional[] = {{p.burstBytes, ".burst_bytes", "0..1e12", 1e12},
                    {p.frameBytes, ".frame_bytes", "0..1e9", 1e9},
                    {p.multiFrameUs, ".multi_frame_us", "0..1e7", 1e7},
                    {p.chainUs, ".chain_us", "0..1e7", 1e7}};
    for (const auto& f : optional) {
      if (!std::isfinite(f.value) || f.value < 0 || f.value > f.most) {
        broken(where + f.name, std::string("must be a finite number in ") + f.range);
      }
    }
    if (p.burstBytes > 0 && (!std::isfinite(p.peakGBs) || !(p.peakGBs > p.bandwidthGBs) || p.peakGBs > 1e6)) {
      broken(where + ".peak_gbs", "must be a finite number above bandwidth_gbs, at most 1e6, with burst_bytes");
    }
  }
}

}  // namespace chorus
