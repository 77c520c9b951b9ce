#include "src/comm/failure_state.h"

namespace chorus {

void FailureState::refuse(const std::string& who) const {
  if (aborted()) throw Error(chorusRemoteError, who + ": communicator was aborted", Failure::kAborted);
  std::lock_guard<std::mutex> lock(mutex_);
  throw Error(asyncError_.load(), who + ": communicator unusable after an earlier failure: " + brokenBecause_,
              brokenFailure_);
}

bool FailureState::wouldBreak(const Error& e, bool deviceCall) const {
  return !broken_.load() && (deviceCall || e.code() != chorusInvalidArgument);
}

void FailureState::record(const Error& e, bool breaks) {
  std::lock_guard<std::mutex> lock(mutex_);
  lastError_ = e.what();
  if (!breaks || !brokenBecause_.empty()) return;
  // The streams to the peers are now out of step: later calls are refused rather than deliver garbage.
  brokenBecause_ = e.what();
  brokenFailure_ = e.failure();
  broken_.store(true);
  chorusResult_t expected = chorusSuccess;
  asyncError_.compare_exchange_strong(expected, e.code());
}

void FailureState::recordMessage(const std::string& message) {
  std::lock_guard<std::mutex> lock(mutex_);
  lastError_ = message;
}

bool FailureState::healthy() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return !aborted() && !broken_.load() && asyncError_.load() == chorusSuccess;
}

const char* FailureState::lastError() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return lastError_.c_str();
}

}  // namespace chorus
