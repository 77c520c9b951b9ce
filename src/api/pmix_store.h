// The store of a job a PMIx launcher started without naming one (no CHORUS_STORE, MASTER_ADDR or MASTER_PORT).
#pragma once

#include <memory>

#include "core/bootstrap/launch_spec.h"
#include "core/bootstrap/store.h"

namespace chorus {

// Rank 0 serves the store on a free port of the interface CHORUS_SOCKET_IFNAME picks, and PMIx carries its address,
// and a fresh secret when CHORUS_SECRET is unset, to the other ranks (core/bootstrap/pmix_exchange.h). Done once per
// process: every later chorusCommInitFromEnv meets in the same store under its own key prefix. Also fills the rank
// and size when only PMIx says them. Returns rank 0's server (null elsewhere), which its communicators keep alive.
std::shared_ptr<StoreServer> completeThroughPmix(LaunchSpec* spec, double timeoutSeconds);

}  // namespace chorus
