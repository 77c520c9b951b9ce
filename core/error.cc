#include "core/error.h"

#include <cstring>

namespace chorus {

void throwSystemError(const std::string& context, const char* call, int err) {
  throw Error(chorusSystemError, context + ": " + call + " failed: " + std::strerror(err));
}

void throwInvalidArgument(const std::string& message) { throw Error(chorusInvalidArgument, message); }

void throwInternal(const std::string& message) { throw Error(chorusInternalError, "internal error: " + message); }

}  // namespace chorus
