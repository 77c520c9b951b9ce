// Errors inside Chorus are exceptions carrying a chorusResult_t; the C ABI turns them into codes + last-error text.
#pragma once

#include <stdexcept>
#include <string>

#include "chorus/chorus.h"

namespace chorus {

class Error : public std::runtime_error {
 public:
  Error(chorusResult_t code, const std::string& message) : std::runtime_error(message), code_(code) {}
  chorusResult_t code() const noexcept { return code_; }

 private:
  chorusResult_t code_;
};

// Throws chorusSystemError: "<context>: <call> failed: <strerror(err)>".
[[noreturn]] void throwSystemError(const std::string& context, const char* call, int err);
// Throws chorusInvalidArgument with the message.
[[noreturn]] void throwInvalidArgument(const std::string& message);
// Throws chorusInternalError with the message (a Chorus bug, not the user's).
[[noreturn]] void throwInternal(const std::string& message);

}  // namespace chorus
