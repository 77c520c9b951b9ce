#include "src/comm/call_description.h"

#include "core/datatype.h"

namespace chorus {

std::string describeCall(const Op& op) {
  std::string s = std::string(collectiveName(op.collective)) + " #" + std::to_string(op.seq) + " (count " +
                  std::to_string(op.count) + ", " + typeName(op.type);
  if (op.collective != Collective::kBroadcast && op.collective != Collective::kAllGather) s += std::string(", ") + opName(op.op);
  if (op.root >= 0) s += ", root " + std::to_string(op.root);
  return s + ")";
}

}  // namespace chorus
