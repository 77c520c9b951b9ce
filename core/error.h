// Errors inside Chorus are exceptions carrying a chorusResult_t; the C ABI turns them into codes + last-error text.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

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
  kLinkDown,     // a network interface a link leaves by went down
};

// No rank (Error::lostPeer when no peer's loss is known to be behind an error).
inline constexpr int kNoRank = -1;

class Error : public std::runtime_error {
 public:
  // A chorusTimeout is a Failure::kTimeout unless said otherwise. `lostPeer`: the rank whose process is gone, when
  // that is the cause (this side saw it hang up, or a peer that gave up because of it said so).
  Error(chorusResult_t code, const std::string& message, Failure failure = Failure::kUnspecified,
        int lostPeer = kNoRank)
      : std::runtime_error(message),
        code_(code),
        failure_(failure == Failure::kUnspecified && code == chorusTimeout ? Failure::kTimeout : failure),
        lostPeer_(lostPeer) {}
  chorusResult_t code() const noexcept { return code_; }
  Failure failure() const noexcept { return failure_; }
  int lostPeer() const noexcept { return lostPeer_; }
  // The same code, kind and lost peer with another message (context added around this one's).
  Error withMessage(const std::string& message) const { return Error(code_, message, failure_, lostPeer_); }

 private:
  chorusResult_t code_;
  Failure failure_;
  int lostPeer_;
};

// Where an error happened, named alike in every message: "rank 3", "rank 3, peer 5", "rank 3, allreduce #12 (...)",
// "rank 3, peer 5, tcp connect to 10.0.0.2:4000". The message goes on after ": " (or this is throwSystemError's
// context). A kNoRank peer and an empty call are left out.
std::string errorContext(int rank, int peer = kNoRank, std::string_view call = {});
// The same with no peer: "rank 3, allreduce #12 (...)".
inline std::string errorContext(int rank, std::string_view call) { return errorContext(rank, kNoRank, call); }

// Throws chorusSystemError: "<context>: <call> failed: <strerror(err)>".
[[noreturn]] void throwSystemError(const std::string& context, const char* call, int err);
// Throws chorusInvalidArgument with the message.
[[noreturn]] void throwInvalidArgument(const std::string& message);
// Throws chorusInternalError with the message (a Chorus bug, not the user's).
[[noreturn]] void throwInternal(const std::string& message);

}  // namespace chorus
