// Moving a small message whole over a non-blocking socket before the connection's own engine runs (the hello's
// answer, the rail probe's go byte and weights): polls until every byte is sent or received, or the deadline passes.
#pragma once

#include <cstddef>
#include <string>

#include "core/deadline.h"

namespace chorus {

// Throw chorusTimeout past the deadline, chorusSystemError with the call's errno, and (receiving) chorusRemoteError
// when the peer closes first; every message starts with `context`.
void sendExact(int fd, const void* buf, size_t bytes, Deadline deadline, const std::string& context);
void recvExact(int fd, void* buf, size_t bytes, Deadline deadline, const std::string& context);

}  // namespace chorus
