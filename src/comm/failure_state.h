// What a communicator knows of its failures, one state that its host call runner, its device call queue and its
// family (shrink) read alike: whether it was aborted, whether an earlier failure left its connections out of step
// (every later call is then refused with that failure), the async error and the last error message.
#pragma once

#include <atomic>
#include <mutex>
#include <string>

#include "core/error.h"

namespace chorus {

class FailureState {
 public:
  // The flag an abort raises; CommIO, the device call queue and the host call order watch it.
  const std::atomic<bool>& abortFlag() const { return aborted_; }
  void abort() { aborted_.store(true); }
  bool aborted() const { return aborted_.load(); }

  // Whether no call may start: aborted, or broken by an earlier failure (two atomic loads: every call asks). Then
  // the connections are abandoned at destroy, not closed gracefully.
  bool unusable() const { return aborted_.load() || broken_.load(); }
  // Throws why (`who`: the rank and call, to begin the message): with the breaking failure's code and kind.
  [[noreturn]] void refuse(const std::string& who) const;
  // A failure `e` of a call breaks the communicator if it is the first and not a refused argument (a device call's
  // always does: its caller has returned, so only the async error can report it).
  bool wouldBreak(const Error& e, bool deviceCall) const;
  // Records `e` as the last error; with `breaks`, also as what broke the communicator, and as the async error.
  void record(const Error& e, bool breaks);
  // Records an error found before a call reached the communicator (bad arguments).
  void recordMessage(const std::string& message);

  // Not aborted, never broken, no async error: a shrink may share the connections.
  bool healthy() const;
  chorusResult_t asyncError() const { return asyncError_.load(); }
  // The last error message ("" if none); valid until the next error.
  const char* lastError() const;

 private:
  std::atomic<bool> aborted_{false};
  std::atomic<bool> broken_{false};  // brokenBecause_ is set
  std::atomic<chorusResult_t> asyncError_{chorusSuccess};
  mutable std::mutex mutex_;
  std::string brokenBecause_;  // set once a failure leaves connections out of step
  Failure brokenFailure_ = Failure::kUnspecified;
  std::string lastError_;
};

}  // namespace chorus
