// Point-to-point calls as the engine runs them: a batch of sends and receives (a group's, or one call's) posted
// together and driven to completion together, so that no order of posting among them can deadlock.
#pragma once

#include <vector>

#include "core/collective.h"
#include "core/deadline.h"
#include "src/comm/call_tags.h"
#include "src/comm/comm_io.h"

namespace chorus {

// Posts every send and receive of `ops` (kSend / kRecv, in call order) on `io`, each framed with its own call tag,
// hands this rank's sends to itself to its receives from itself (the k-th send meets the k-th receive), and waits
// for all. Throws chorusInvalidUsage (a mismatch) when sends and receives to itself do not pair up in count or
// size. `ops` must outlive the call.
void runPointToPoint(CommIO& io, CallTags& tags, const std::vector<const CallArgs*>& ops, LazyDeadline deadline);

}  // namespace chorus
