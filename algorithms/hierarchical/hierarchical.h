// Two-level collectives: within each host (shared memory), then between one leader per host (the network),
// then within each host again. Correct for any split of ranks over hosts, uneven included.
#pragma once

#include "core/collective.h"
#include "algorithms/peer_io.h"

namespace chorus {

// Reduce to each host's leader, allreduce among leaders, broadcast from each leader.
void hierarchicalAllReduce(PeerIO& io, const CallArgs& op);
// Broadcast among host leaders (the root leads its host), then within each host.
void hierarchicalBroadcast(PeerIO& io, const CallArgs& op);
// Reduce within each host to its leader (the root leads its host), then among leaders to the root.
void hierarchicalReduce(PeerIO& io, const CallArgs& op);
// Each host's leader gathers its ranks' send buffers, leaders exchange one message per pair of hosts, and hand
// their ranks the results.
void hierarchicalAllToAll(PeerIO& io, const CallArgs& op);

}  // namespace chorus
