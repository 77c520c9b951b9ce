#include "src/comm/call_description.h"

#include "core/datatype.h"

namespace chorus {

std::string describeCall(const CallArgs& op) {
  std::string s = std::string(collectiveName(op.collective)) + " #" + std::to_string(op.seq);
  if (op.collective == Collective::kBarrier) return s;
  s += " (";
  if (op.collective != Collective::kAllToAllv) s += "count " + std::to_string(op.count) + ", ";
  s += typeName(op.type);
  if (reducesValues(op.collective)) s += std::string(", ") + opName(op.reduction);
  if (op.root >= 0) s += ", root " + std::to_string(op.root);
  if (op.collective == Collective::kSend) s += ", to rank " + std::to_string(op.peer);
  if (op.collective == Collective::kRecv) {
    s += op.peer == kAnyPeer ? std::string(", from any rank") : ", from rank " + std::to_string(op.peer);
  }
  return s + ")";
}

}  // namespace chorus
