// The C ABI's chorusConfig_t turned into the settings a communicator runs with: each set field checked and taken,
// each unset field from its environment variable. Throws chorusInvalidArgument naming the field (or variable).
#pragma once

#include "chorus/chorus.h"
#include "core/comm_config.h"

namespace chorus {

// config NULL: everything from the environment, or `base` when given. `call` starts every message
// ("chorusCommInitRankConfig"). base: where unset fields come from instead of the environment (a split's parent).
CommConfig resolveConfig(const chorusConfig_t* config, const char* call, const CommConfig* base = nullptr);

}  // namespace chorus
