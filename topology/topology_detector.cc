#include "topology/topology_detector.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>

#include "core/error.h"
#include "topology/cpu_list.h"
#include "topology/host_topology_check.h"

#ifdef CHORUS_HAVE_HWLOC
#include <hwloc.h>
#endif

namespace chorus {

namespace {

constexpr const char* kFallbackPrefix = "fallback";

std::string thisHostname() {
  char name[256] = {0};
  if (gethostname(name, sizeof(name) - 1) != 0) return {};
  return name;
}

HostTopology fallbackTopology(const std::string& why) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  long pages = sysconf(_SC_PHYS_PAGES);
  long pageSize = sysconf(_SC_PAGESIZE);
  uint64_t memory = pages > 0 && pageSize > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(pageSize) : 0;
  std::string source = std::string(kFallbackPrefix) + " (" + why + ")";
  if (source.size() > kMaxTopologyText) source = source.substr(0, kMaxTopologyText - 4) + "...)";
  HostTopology t =
      minimalHostTopology(cpus > 0 ? static_cast<int>(std::min<long>(cpus, kMaxCpuIndex + 1)) : 1, memory, source);
  t.hostname = thisHostname();
  return t;
}

#ifdef CHORUS_HAVE_HWLOC

// Why hwloc detection gave up; caught in detectHostTopology() and turned into the fallback.
struct HwlocFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void hwlocFailed(const char* call, int err) {
  throw HwlocFailure(std::string(call) + " failed: " + (err ? std::strerror(err) : "no error code"));
}

class HwlocTopology {
 public:
  HwlocTopology() {
    if (hwloc_topology_init(&topology_) != 0) hwlocFailed("hwloc_topology_init", errno);
  }
  ~HwlocTopology() { hwloc_topology_destroy(topology_); }
  HwlocTopology(const HwlocTopology&) = delete;
  HwlocTopology& operator=(const HwlocTopology&) = delete;
  hwloc_topology_t get() const { return topology_; }

 private:
  hwloc_topology_t topology_ = nullptr;
};

class HwlocBitmap {
 public:
  HwlocBitmap() : bitmap_(hwloc_bitmap_alloc()) {
    if (!bitmap_) hwlocFailed("hwloc_bitmap_alloc", errno);
  }
  ~HwlocBitmap() { hwloc_bitmap_free(bitmap_); }
  HwlocBitmap(const HwlocBitmap&) = delete;
  HwlocBitmap& operator=(const HwlocBitmap&) = delete;
  hwloc_bitmap_t get() const { return bitmap_; }

 private:
  hwloc_bitmap_t bitmap_;
};

void checked(int rc, const char* call) {
  if (rc < 0) hwlocFailed(call, errno);
}

// The OS numbers in a (finite) set; an infinite or absurdly large one is a failure, not a loop.
std::vector<int> cpusOf(hwloc_const_bitmap_t set) {
  std::vector<int> out;
  if (!set) return out;
  if (hwloc_bitmap_weight(set) < 0 || hwloc_bitmap_last(set) > kMaxCpuIndex) {
    throw HwlocFailure("hwloc reported a CPU set beyond CPU " + std::to_string(kMaxCpuIndex));
  }
  for (int i = hwloc_bitmap_first(set); i >= 0; i = hwloc_bitmap_next(set, i)) out.push_back(i);
  return out;
}

int osIndexOf(hwloc_obj_t obj) {
  return obj->os_index == HWLOC_UNKNOWN_INDEX ? static_cast<int>(obj->logical_index) : static_cast<int>(obj->os_index);
}

int coresIn(hwloc_topology_t topo, hwloc_const_cpuset_t set, size_t cpus) {
  if (cpus == 0) return 0;
  int n = hwloc_get_nbobjs_inside_cpuset_by_type(topo, set, HWLOC_OBJ_CORE);
  // Some VMs and architectures expose no cores: then every hardware thread counts as one.
  return n > 0 ? n : static_cast<int>(cpus);
}

void detectPackages(hwloc_topology_t topo, HostTopology* t) {
  int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
  checked(n, "hwloc_get_nbobjs_by_type(PACKAGE)");
  if (n == 0) {  // no package information: one package holding the whole machine
    hwloc_const_cpuset_t all = hwloc_topology_get_topology_cpuset(topo);
    if (!all) hwlocFailed("hwloc_topology_get_topology_cpuset", errno);
    std::vector<int> cpus = cpusOf(all);
    t->packages.push_back({0, cpus, coresIn(topo, all, cpus.size())});
    return;
  }
  for (int i = 0; i < n; ++i) {
    hwloc_obj_t p = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, static_cast<unsigned>(i));
    if (!p) hwlocFailed("hwloc_get_obj_by_type(PACKAGE)", errno);
    std::vector<int> cpus = cpusOf(p->cpuset);
    t->packages.push_back({osIndexOf(p), cpus, coresIn(topo, p->cpuset, cpus.size())});
  }
  std::sort(t->packages.begin(), t->packages.end(), [](auto& a, auto& b) { return a.id < b.id; });
}

// hwloc gives memory-only nodes (HBM, CXL, NVDIMM) the CPU set of their locality, so that a CPU may appear in
// several nodes. Linux (and the topology file) puts each CPU in one node: the lowest-numbered that has it.
void detectNumaNodes(hwloc_topology_t topo, HostTopology* t) {
  int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
  checked(n, "hwloc_get_nbobjs_by_type(NUMANODE)");
  std::vector<hwloc_obj_t> nodes;
  for (int i = 0; i < n; ++i) {
    hwloc_obj_t node = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i));
    if (!node) hwlocFailed("hwloc_get_obj_by_type(NUMANODE)", errno);
    nodes.push_back(node);
  }
  std::sort(nodes.begin(), nodes.end(), [](hwloc_obj_t a, hwloc_obj_t b) { return osIndexOf(a) < osIndexOf(b); });
  HwlocBitmap claimed;
  HwlocBitmap own;
  for (hwloc_obj_t node : nodes) {
    if (node->cpuset) {
      checked(hwloc_bitmap_andnot(own.get(), node->cpuset, claimed.get()), "hwloc_bitmap_andnot");
      checked(hwloc_bitmap_or(claimed.get(), claimed.get(), own.get()), "hwloc_bitmap_or");
    } else {
      hwloc_bitmap_zero(own.get());
    }
    std::vector<int> cpus = cpusOf(own.get());
    t->numaNodes.push_back({osIndexOf(node), cpus, coresIn(topo, own.get(), cpus.size()),
                            static_cast<uint64_t>(node->attr ? node->attr->numanode.local_memory : 0)});
  }
  if (t->numaNodes.empty()) {  // hwloc 2 always has one; be safe anyway
    const CpuPackage& all = t->packages.front();
    t->numaNodes.push_back({0, all.cpus, all.cores, 0});
  }
}

void detectCaches(hwloc_topology_t topo, HostTopology* t) {
  std::map<std::pair<int, uint64_t>, int> groups;
  for (hwloc_obj_type_t type :
       {HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L4CACHE, HWLOC_OBJ_L5CACHE}) {
    int n = hwloc_get_nbobjs_by_type(topo, type);
    if (n < 0) continue;  // caches may live at several depths in odd topologies; then they are not worth it
    for (int i = 0; i < n; ++i) {
      hwloc_obj_t c = hwloc_get_obj_by_type(topo, type, static_cast<unsigned>(i));
      if (!c || !c->attr || c->attr->cache.size == 0) continue;
      if (c->attr->cache.type == HWLOC_OBJ_CACHE_INSTRUCTION) continue;
      uint64_t size = std::min<uint64_t>(c->attr->cache.size, kMaxCacheBytes);
      ++groups[{static_cast<int>(c->attr->cache.depth), size}];
    }
  }
  for (const auto& [key, count] : groups) t->caches.push_back({key.first, key.second, count});
}

std::string hex4(unsigned value) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "%04x", value & 0xffff);
  return buf;
}

bool isGpuClass(unsigned classId, unsigned vendor) {
  // 3D controllers are compute GPUs; VGA controllers only from GPU vendors (a VM's emulated VGA is no GPU).
  return classId == 0x0302 || ((classId >> 8) == 0x03 && (vendor == 0x10de || vendor == 0x1002));
}

bool isNicClass(unsigned classId) { return (classId >> 8) == 0x02 || classId == 0x0c06; /* network; InfiniBand */ }

// The NUMA node a device hangs off: the one node with CPUs under its nearest non-I/O ancestor; -1 if several.
int numaOfDevice(hwloc_topology_t topo, hwloc_obj_t device, const HostTopology& t) {
  hwloc_obj_t anchor = hwloc_get_non_io_ancestor_obj(topo, device);
  if (!anchor || !anchor->nodeset) return -1;
  int found = -1;
  for (int i = hwloc_bitmap_first(anchor->nodeset); i >= 0; i = hwloc_bitmap_next(anchor->nodeset, i)) {
    const NumaNode* node = t.numaNode(i);
    if (!node || node->cpus.empty()) continue;
    if (found >= 0) return -1;
    found = i;
  }
  return found;
}

void detectPciDevices(hwloc_topology_t topo, HostTopology* t) {
  std::map<hwloc_obj_t, PciDevice> devices;
  for (hwloc_obj_t pci = hwloc_get_next_pcidev(topo, nullptr); pci; pci = hwloc_get_next_pcidev(topo, pci)) {
    const auto& a = pci->attr->pcidev;
    bool gpu = isGpuClass(a.class_id, a.vendor_id);
    if (!gpu && !isNicClass(a.class_id)) continue;
    PciDevice d;
    d.kind = gpu ? PciKind::kGpu : PciKind::kNic;
    char bus[32];
    std::snprintf(bus, sizeof(bus), "%04x:%02x:%02x.%01x", static_cast<unsigned>(a.domain), a.bus, a.dev, a.func & 7);
    d.busId = bus;
    d.vendorId = hex4(a.vendor_id);
    d.deviceId = hex4(a.device_id);
    if (const char* name = hwloc_obj_get_info_by_name(pci, "PCIDevice")) d.name = name;
    d.numaNode = numaOfDevice(topo, pci, *t);
    devices.emplace(pci, std::move(d));
  }
  for (hwloc_obj_t os = hwloc_get_next_osdev(topo, nullptr); os; os = hwloc_get_next_osdev(topo, os)) {
    auto it = devices.find(os->parent);
    if (it == devices.end() || !os->name) continue;
    PciDevice& d = it->second;
    if (d.kind == PciKind::kNic && d.interfaces.size() < kMaxDeviceNames &&
        os->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK) {
      d.interfaces.push_back(os->name);
    } else if (d.kind == PciKind::kNic && d.rdmaDevices.size() < kMaxDeviceNames &&
               os->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS) {
      d.rdmaDevices.push_back(os->name);
    } else if (d.kind == PciKind::kGpu) {
      // CUDA/NVML/RSMI backends name the model; prefer it to the PCI database name.
      if (const char* model = hwloc_obj_get_info_by_name(os, "GPUModel")) d.name = model;
    }
  }
  for (auto& [obj, d] : devices) {
    if (d.name.size() > kMaxTopologyText) d.name.resize(kMaxTopologyText);
    t->pciDevices.push_back(std::move(d));
  }
  std::sort(t->pciDevices.begin(), t->pciDevices.end(), [](auto& a, auto& b) { return a.busId < b.busId; });
}

// Discovery components a communication library must not run: they initialise GPU runtimes in every process
// (cuda, nvml, rsmi, levelzero, opencl: slow, and CUDA state the application did not ask for), talk to X
// servers (gl), or leak at unload (pci, through libpciaccess; the linux component reads the same PCI devices
// from sysfs). GPUs are still found on the PCI bus, by class and vendor.
constexpr const char* kSkippedComponents[] = {"cuda", "nvml", "rsmi", "levelzero", "opencl", "gl", "pci"};

HostTopology detectWithHwloc() {
  HwlocTopology topology;
  hwloc_topology_t topo = topology.get();
  for (const char* component : kSkippedComponents) {
    // EINVAL: this hwloc has no such component (plugins are optional), so there is nothing to skip.
    if (hwloc_topology_set_components(topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, component) != 0 &&
        errno != EINVAL) {
      hwlocFailed("hwloc_topology_set_components(BLACKLIST)", errno);
    }
  }
  checked(hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT),
          "hwloc_topology_set_io_types_filter");
  checked(hwloc_topology_load(topo), "hwloc_topology_load");
  HostTopology t;
  hwloc_obj_t root = hwloc_get_root_obj(topo);
  const char* version = root ? hwloc_obj_get_info_by_name(root, "hwlocVersion") : nullptr;
  t.source = std::string("hwloc ") + (version ? version : "2");
  t.hostname = thisHostname();
  detectPackages(topo, &t);
  detectNumaNodes(topo, &t);
  detectCaches(topo, &t);
  detectPciDevices(topo, &t);
  return t;
}

#endif  // CHORUS_HAVE_HWLOC

}  // namespace

HostTopology detectHostTopology() {
#ifdef CHORUS_HAVE_HWLOC
  try {
    HostTopology t = detectWithHwloc();
    validateHostTopology(t);
    return t;
  } catch (const HwlocFailure& e) {
    return fallbackTopology(e.what());
  } catch (const Error& e) {
    return fallbackTopology(std::string("hwloc reported an inconsistent topology: ") + e.what());
  }
#else
  return fallbackTopology("Chorus was built without hwloc");
#endif
}

bool isFallbackTopology(const HostTopology& t) { return t.source.rfind(kFallbackPrefix, 0) == 0; }

}  // namespace chorus
