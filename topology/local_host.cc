#include "topology/local_host.h"

#include <chrono>
#include <mutex>
#include <optional>

#include "core/logging.h"
#include "core/params.h"
#include "topology/topology_detector.h"
#include "topology/topology_json.h"

namespace chorus {

HostTopology loadLocalHostTopology() {
  if (params::isSet("CHORUS_TOPO_FILE")) return loadTopologyFile(params::topoFile());
  HostTopology t = detectHostTopology();
  if (isFallbackTopology(t)) {
    CHORUS_WARN(-1, "topology: hwloc detection failed, assuming 1 package, 1 NUMA node, " << t.cores()
                                                                                          << " cores: " << t.source);
  }
  return t;
}

const HostTopology& localHostTopology() {
  static std::mutex mutex;
  static std::optional<HostTopology> cached;
  std::lock_guard<std::mutex> lock(mutex);
  if (!cached) {
    auto start = std::chrono::steady_clock::now();
    cached = loadLocalHostTopology();
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    CHORUS_INFO(-1, "topology: " << cached->packages.size() << " packages, " << cached->numaNodes.size()
                                 << " NUMA nodes, " << cached->cores() << " cores, " << cached->gpus() << " GPUs, "
                                 << cached->pciDevices.size() - static_cast<size_t>(cached->gpus()) << " NICs from "
                                 << cached->source << " in " << static_cast<int>(ms) << " ms");
  }
  return *cached;
}

}  // namespace chorus
