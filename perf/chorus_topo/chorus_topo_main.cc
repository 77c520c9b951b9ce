// chorus-topo: what Chorus detects on this host and what it would do with a world of such hosts.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <ostream>

#include "algorithms/selection/decision_table.h"
#include "algorithms/selection/world_costs.h"
#include "perf/chorus_topo/cluster_file.h"
#include "perf/chorus_topo/tcp_interfaces.h"
#include "perf/chorus_topo/topo_options.h"
#include "core/comm_config.h"
#include "core/params.h"
#include "core/error.h"
#include "topology/global_topology.h"
#include "topology/link_model.h"
#include "topology/local_host.h"
#include "topology/topology_description.h"
#include "topology/topology_json.h"
#ifdef CHORUS_HAVE_VERBS
#include "transports/ib/ib_ports.h"
#include "transports/ib/verbs_api.h"
#endif

namespace chorus::topo {

namespace {

// What the selector would choose in this world (CHORUS_ALGO and CHORUS_CHUNK_SIZE apply as they would at init;
// ranks of one host are assumed to talk through shared memory).
void printDecisionTable(std::ostream& out, const GlobalTopology& world, const LinkModel& model) {
  const size_t slice =
      static_cast<size_t>(params::asBytes("CHORUS_CHUNK_SIZE", params::chunkSize(), 4096, 64 << 20));
  const CostInputs in = costInputsFor(world, model, false, slice);
  DecisionTable table(in, AlgoRules::parse(params::algo()));
  out << "\nDecision table (" << in.nranks << " ranks, " << in.nhosts << " host(s), up to " << in.maxRanksPerHost
      << " per host, " << in.coresPerHost << " cores per host)\n";
  table.print(out);
  out << "as CHORUS_ALGO: " << table.asRules() << "\n";
}

// The RDMA ports the ib transport could use (the software device's with CHORUS_IB_EMULATION=1).
void printRdmaPorts(std::ostream& out, const HostTopology& host) {
#ifdef CHORUS_HAVE_VERBS
  const bool emulated = env_config::ibEmulation();
  std::string why;
  const VerbsApi* api = emulated ? emulatedVerbs() : systemVerbs(&why);
  std::vector<IbPortReport> ports;
  if (api) ports = listIbPorts(*api, host, &why);
  out << "\nRDMA ports (" << (api ? api->origin : "libibverbs.so.1") << ")\n";
  if (ports.empty()) {
    out << "  none: " << why << "\n";
    return;
  }
  out << "  " << std::left << std::setw(16) << "HCA:port" << std::setw(14) << "state" << std::setw(17) << "link layer"
      << std::setw(28) << "rate" << std::setw(7) << "MTU" << std::setw(6) << "NUMA" << "GPUs on that node\n";
  for (const IbPortReport& p : ports) {
    std::string gpus, where = p.device;
    for (int g : p.gpusNear) {
      if (!gpus.empty()) gpus += ',';
      gpus += std::to_string(g);
    }
    where += ':';
    where += std::to_string(p.port);
    out << "  " << std::left << std::setw(16) << where << std::setw(14) << p.state
        << std::setw(17) << p.linkLayer << std::setw(28) << p.rate << std::setw(7) << p.mtu << std::setw(6)
        << (p.numaNode >= 0 ? std::to_string(p.numaNode) : "?") << (gpus.empty() ? "-" : gpus) << "\n";
  }
  out << std::right;
#else
  out << "\nRDMA ports: not built (no infiniband/verbs.h at build time)\n";
#endif
}

HostTopology loadHost(const TopoOptions& options) {
  return options.file.empty() ? loadLocalHostTopology() : loadTopologyFile(options.file);
}

void writeDump(const std::string& path, const HostTopology& host) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throwSystemError("chorus-topo: writing " + path, "open", errno);
  out << topologyToJson(host);
  out.flush();
  if (!out) throwSystemError("chorus-topo: writing " + path, "write", errno);
}

// One row per link class: its figures, where they came from, whether this world uses it, and the predicted
// one-way time of a few message sizes.
void printLinkTable(std::ostream& out, const GlobalTopology& world, const LinkModel& model) {
  out << "\nLink classes (alpha-beta: time = latency + bytes / bandwidth)\n";
  out << "  " << std::left << std::setw(12) << "class" << std::right << std::setw(12) << "latency_us" << std::setw(10)
      << "GB/s"
      << "  " << std::left << std::setw(8) << "source" << std::setw(26) << "used by this world" << std::right
      << std::setw(10) << "8 B us" << std::setw(11) << "64 KiB us" << std::setw(11) << "16 MiB us"
      << "\n";
  for (LinkClass c : kAllLinkClasses) {
    auto hostPair = world.representativePair(c, MemoryKind::kHost);
    auto devicePair = world.representativePair(c, MemoryKind::kDevice);
    auto pair = hostPair ? hostPair : devicePair;
    std::string used = !pair ? "no"
                             : "ranks " + std::to_string(pair->first) + "-" + std::to_string(pair->second) +
                                   (hostPair ? "" : " (GPU buffers)");
    const LinkParams& p = model.params(c);
    out << "  " << std::left << std::setw(12) << linkClassName(c) << std::right << std::fixed << std::setprecision(2)
        << std::setw(12) << p.latencyUs << std::setw(10) << p.bandwidthGBs << "  " << std::left << std::setw(8)
        << linkSourceName(model.source(c)) << std::setw(26) << used << std::right << std::setprecision(1)
        << std::setw(10) << model.transferUs(c, 8) << std::setw(11) << model.transferUs(c, 64 << 10) << std::setw(11)
        << model.transferUs(c, 16 << 20) << "\n";
    out.unsetf(std::ios::fixed);
  }
}

int run(const TopoOptions& options) {
  if (!options.predictPath.empty()) {
    printPredictions(std::cout, loadClusterFile(options.predictPath), withDefaults(options.predict));
    return 0;
  }
  HostTopology host = loadHost(options);
  if (!options.dumpPath.empty()) {
    writeDump(options.dumpPath, host);
    if (!options.json) std::cout << "wrote " << options.dumpPath << "\n";
  }
  if (options.json) {
    std::cout << topologyToJson(host);
    return 0;
  }
  const int ranks = options.ranks > 0 ? options.ranks : std::max(1, host.cores()) * options.hosts;
  const GlobalTopology world = GlobalTopology::emulated(ranks, options.hosts, EmulatedHostShape::of(host));
  const LinkModel model = linkModelOf(host);

  std::cout << "Host\n" << describeHost(host);
  printRdmaPorts(std::cout, host);
  std::cout << "\nWorld: " << ranks << " ranks on " << options.hosts << (options.hosts == 1 ? " host" : " hosts")
            << " like this one, ranks spread over each host's NUMA nodes in blocks\n"
            << describeTopology(world, model);
  printLinkTable(std::cout, world, model);
  printTcpInterfaces(std::cout, world);

  printDecisionTable(std::cout, world, model);
  return 0;
}

}  // namespace

}  // namespace chorus::topo

int main(int argc, char** argv) {
  using namespace chorus::topo;
  TopoOptions options = parseTopoOptions(argc, argv);
  if (options.showHelp) {
    std::cout << topoUsage();
    return 0;
  }
  if (!options.error.empty()) {
    std::cerr << "chorus-topo: " << options.error << "\n\n" << topoUsage();
    return 2;
  }
  try {
    return run(options);
  } catch (const std::exception& e) {
    std::cerr << "chorus-topo: " << e.what() << "\n";
    return 1;
  }
}
