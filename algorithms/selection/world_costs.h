// The cost model's view of a real or emulated world: ranks per host, cores, and what its links cost.
#pragma once

#include <cstddef>

#include "algorithms/selection/cost_model.h"
#include "topology/global_topology.h"
#include "topology/link_model.h"

namespace chorus {

// sameHostOverNetwork: ranks of one host talk over the network (a transport list without shared memory): then
// those pairs cost what the network does.
CostInputs costInputsFor(const GlobalTopology& world, const LinkModel& links, bool sameHostOverNetwork,
                         size_t sliceBytes);

}  // namespace chorus
