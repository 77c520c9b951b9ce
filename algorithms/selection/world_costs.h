// The cost model's view of a real or emulated world: ranks per host, cores, and what its links cost.
#pragma once

#include <cstddef>
#include <string_view>

#include "algorithms/selection/cost_model.h"
#include "topology/global_topology.h"
#include "topology/link_model.h"

namespace chorus {

// sameHostTransport: what carries bytes between ranks of one host ("shm", or "tcp" when CHORUS_TRANSPORT forces
// it: then those pairs cost what the network does).
CostInputs costInputsFor(const GlobalTopology& world, const LinkModel& links, std::string_view sameHostTransport,
                         size_t sliceBytes);

}  // namespace chorus
