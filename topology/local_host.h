// The topology of the host this process runs on: CHORUS_TOPO_FILE when set, else what hwloc detects.
#pragma once

#include "topology/host_topology.h"

namespace chorus {

// Loads CHORUS_TOPO_FILE (throws chorusInvalidArgument naming the file and the field when it is unreadable or
// malformed) or detects this host (falls back to a minimal topology with one WARN when hwloc fails). Uncached.
HostTopology loadLocalHostTopology();

// loadLocalHostTopology() once per process (detection costs tens of milliseconds); every later call returns the
// same object. A failed load is not cached: the next call tries again.
const HostTopology& localHostTopology();

}  // namespace chorus
