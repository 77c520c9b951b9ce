#include "src/comm/call_under_way.h"

#include "src/comm/call_description.h"

namespace chorus {

std::string CallUnderWay::name() const { return op != nullptr ? describeCall(*op) : std::string("a call"); }

}  // namespace chorus
