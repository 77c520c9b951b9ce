// Detects this host's topology with hwloc (packages, NUMA nodes, cores, caches, GPUs and NICs).
#pragma once

#include "topology/host_topology.h"

namespace chorus {

// Asks hwloc (I/O devices filtered to the important ones: GPUs and NICs). Never throws for hwloc's sake: when
// any hwloc call fails, or hwloc reports something inconsistent, or Chorus was built without hwloc, returns
// minimalHostTopology(online CPUs, physical memory) with a source saying why; the caller warns. Uncached: costs
// tens of milliseconds; use localHostTopology() (local_host.h).
HostTopology detectHostTopology();

// True when `t` is the fallback detectHostTopology() returns instead of what hwloc saw.
bool isFallbackTopology(const HostTopology& t);

}  // namespace chorus
