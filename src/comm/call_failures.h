// What failures do to a communicator, its host and device calls alike: a call refused once the communicator is
// unusable, the error a failed call throws (peers told at once, the listing of what each rank called), an abort
// that wakes whatever waits, and how its connections end. What it knows of them: failure_state.h.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/bootstrap/store.h"
#include "core/collective.h"
#include "core/error.h"
#include "src/comm/comm_metrics.h"
#include "src/comm/failure_state.h"
#include "src/comm/mismatch_report.h"
#include "transports/connection.h"

namespace chorus {

class CallFailures {
 public:
  explicit CallFailures(std::string commName) : commName_(std::move(commName)) {}
  ~CallFailures();
  CallFailures(const CallFailures&) = delete;
  CallFailures& operator=(const CallFailures&) = delete;

  FailureState& state() { return state_; }
  const FailureState& state() const { return state_; }

  // The descriptor an abort writes to, which every CommIO of the communicator sleeps on (closed at destroy);
  // `who` begins the message if it cannot be made.
  void openWakeDescriptor(const std::string& who);
  int wakeDescriptor() const { return wakeFd_; }
  // Failed calls and aborts are counted in `metrics` (config metricsPort); null: not counted.
  void countIn(CommMetrics* metrics) { metrics_ = metrics; }
  // chorusCommAbort: raises the abort flag and wakes a CommIO asleep in poll.
  void abort();

  // config checkMismatch: a failed collective lists what each rank called, through `store` under keyPrefix.
  void listMismatchesThrough(StoreClient& store, const std::string& keyPrefix, int rank, int size);
  // The connections a breaking failure abandons: the host ones, and the device ones while they exist (null: none).
  void watchHostConnections(std::vector<std::unique_ptr<Connection>>* conns) { hostConns_ = conns; }
  void watchDeviceConnections(std::vector<std::unique_ptr<Connection>>* conns) { deviceConns_ = conns; }

  // Throws why no call may start where none may; who() (the rank and call, to begin the message) is made only then.
  template <class Who>
  void refuseIfUnusable(Who who) const {
    if (state_.unusable()) state_.refuse(who());
  }
  // What a failed call throws: `raw` with the call and communicator named; at the communicator's first failure
  // the peers are told at once (the connections abandoned) and, where the ranks may have called different things,
  // the listing of what each called (collectiveNumber: the call's, from its call tags); recorded in state().
  Error failCall(const Error& raw, const CallArgs& op, bool deviceCall, uint64_t collectiveNumber);
  // At destroy: the peers hear a goodbye, or, once unusable, that we gave up (they may be blocked in a call with us).
  void closeConnections(std::vector<std::unique_ptr<Connection>>& conns) const;

 private:
  void abandonConnections(int lostPeer);

  // How long a failed call waits for the other ranks' descriptions of the calls they failed in. They fail within
  // ms of each other on an idle machine, but 0.5 s was too short with two jobs on two cores (CI: a torch job beside
  // PyTorch's own suite), and 2 s once missed a rank with a build beside the tests. The whole wait is spent only
  // where a rank is in no call at all (one that completed its side fails in its next call and says so), and never
  // where a peer was lost (no listing is made then).
  static constexpr double kMismatchListingWaitSeconds = 5.0;
  static constexpr double kAbortPublishSeconds = 0.25;  // an aborted call's description: a store round trip at most

  const std::string commName_;
  FailureState state_;  // aborted, broken, the async and last errors
  int wakeFd_ = -1;
  std::unique_ptr<MismatchReport> mismatchReport_;  // null when checkMismatch is off
  std::vector<std::unique_ptr<Connection>>* hostConns_ = nullptr;
  std::vector<std::unique_ptr<Connection>>* deviceConns_ = nullptr;
  CommMetrics* metrics_ = nullptr;
};

}  // namespace chorus
