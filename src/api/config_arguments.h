// The C ABI's chorusConfig_t turned into the settings a communicator runs with: each set field checked and taken,
// each unset field from its environment variable. Throws chorusInvalidArgument naming the field (or variable).
#pragma once

#include "chorus/chorus.h"
#include "core/comm_config.h"

namespace chorus {

// config NULL: everything from the environment. `call` starts every message ("chorusCommInitRankConfig").
CommConfig resolveConfig(const chorusConfig_t* config, const char* call);

}  // namespace chorus
