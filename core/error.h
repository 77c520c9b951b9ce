// Errors inside Chorus are exceptions carrying a chorusResult_t; the C ABI turns them into codes + last-error text.
#pragma once

#include <stdexcept>
#include <string>

#include "chorus/chorus.h"

namespace chorus {

// What kind of failure an error is, for code that must react to it (the message is for people; nothing parses it).
enum class Failure {
  kUnspecified,  // argument, system and internal errors: nothing to react to but the code
  kPeerLost,     // a peer's process is gone: its connection ended without a goodbye
  kRemoteError,  // a peer gave up on the communicator after an error or an abort of its own
  kTimeout,      // a wait ran past the timeout
  kMismatch,     // the ranks called different things: sizes, tags or numbers of calls disagree
  kAborted,      // chorusCommAbort on this communicator
  kCorrupt,      // a frame or record no correct peer sends
};

class Error : public std::runtime_error {
 public:
  // A chorusTimeout is a Failure::kTimeout unless said otherwise.
  Error(chorusResult_t code, const std::string& message, Failure failure = Failure::kUnspecified)
      : std::runtime_error(message),
        code_(code),
        failure_(failure == Failure::kUnspecified && code == chorusTimeout ? Failure::kTimeout : failure) {}
  chorusResult_t code() const noexcept { return code_; }
  Failure failure() const noexcept { return failure_; }
  // The same code and kind with another message (context added around this one's).
  Error withMessage(const std::string& message) const { return Error(code_, message, failure_); }

 private:
  chorusResult_t code_;
  Failure failure_;
};

// Throws chorusSystemError: "<context>: <call> failed: <strerror(err)>".
[[noreturn]] void throwSystemError(const std::string& context, const char* call, int err);
// Throws chorusInvalidArgument with the message.
[[noreturn]] void throwInvalidArgument(const std::string& message);
// Throws chorusInternalError with the message (a Chorus bug, not the user's).
[[noreturn]] void throwInternal(const std::string& message);

}  // namespace chorus
