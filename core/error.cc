#include "core/error.h"

#include <cstring>

namespace chorus {

std::string errorContext(int rank, int peer, std::string_view call) {
  std::string s = "rank " + std::to_string(rank);
  if (peer != kNoRank) s += ", peer " + std::to_string(peer);
  if (!call.empty()) s.append(", ").append(call);
  return s;
}

void throwSystemError(const std::string& context, const char* call, int err) {
  throw Error(chorusSystemError, context + ": " + call + " failed: " + std::strerror(err));
}

void throwInvalidArgument(const std::string& message) { throw Error(chorusInvalidArgument, message); }

void throwInternal(const std::string& message) { throw Error(chorusInternalError, "internal error: " + message); }

}  // namespace chorus
