// How a call is named in messages: "allreduce #12 (count 1000, float32, sum)". Built only when a message needs it,
// never on the fast path.
#pragma once

#include <string>

#include "core/collective.h"

namespace chorus {

std::string describeCall(const CallArgs& op);

}  // namespace chorus
