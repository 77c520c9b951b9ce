// Human-readable accounts of a host and a world, for CHORUS_DEBUG=INFO and chorus-topo. One fact per line.
#pragma once

#include <string>

#include "topology/global_topology.h"
#include "topology/host_topology.h"
#include "topology/link_model.h"

namespace chorus {

// Lines (each ending in '\n'): a summary, then each package, NUMA node (CPUs, cores, memory), the caches, each
// GPU and NIC with its NUMA node.
std::string describeHost(const HostTopology& host);

// Lines (each ending in '\n'): ranks, hosts, ranks per host and leaders; one line per host (at most 32, then a
// count) with its ranks grouped by NUMA node and GPU; the link classes present with their latency, bandwidth and
// where the figures came from. Meant to be logged line by line at INFO at communicator init.
std::string describeTopology(const GlobalTopology& world, const LinkModel& model);

// Logs at INFO (when enabled): describeHost(host) on the lowest rank of each host, describeTopology(world,
// model) on rank 0; line by line, so that each log line stays one fact.
void logTopology(int rank, const HostTopology& host, const GlobalTopology& world, const LinkModel& model);


}  // namespace chorus
