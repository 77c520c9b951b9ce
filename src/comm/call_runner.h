// Runs a communicator's calls, host and device alike, each under the call lock its caller holds: numbers them, refuses
// them once the communicator is unusable, runs a batch's sends and receives first and then its collectives in call
// order (small allreduces fused), and hands a failure to its CallFailures.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "algorithms/selection/call_planner.h"
#include "core/collective.h"
#include "core/comm_config.h"
#include "src/comm/call_failures.h"
#include "src/comm/call_tags.h"
#include "src/comm/call_trace.h"
#include "src/comm/comm_io.h"
#include "src/comm/comm_metrics.h"
#include "src/comm/compression_agreement.h"
#include "src/comm/tensor_fusion.h"
#include "src/flight/comm_flight.h"

namespace chorus {

class CallRunner {
 public:
  // config: commName (logs) and timeoutSeconds (each call's deadline). tagSalt: CallTags' (a split child that
  // shares its parent's connections salts with its identity, so that the family's frames never pass for its own).
  CallRunner(int rank, int size, const CommConfig& config, CallFailures& failures, uint64_t tagSalt = 0);

  // Set up once, before the first call: how calls run, and the trace (null: not tracing).
  void planWith(std::unique_ptr<CallPlanner> planner) { planner_ = std::move(planner); }
  void traceInto(std::unique_ptr<CallTrace> trace) { trace_ = std::move(trace); }
  CallPlanner* planner() const { return planner_.get(); }  // null before setup
  CallTrace* trace() const { return trace_.get(); }
  // Every call is recorded in `flight` (queued, running, waiting, done or failed), which a failure that breaks the
  // communicator dumps (CHORUS_FLIGHT_DIR); null: not recorded.
  void recordFlightIn(CommFlight* flight) { flight_ = flight; }
  CompressionAgreement& compression() { return compression_; }

  // Runs a batch of calls on the CommIO that prepare() returns (it may wait and build); the caller holds the call
  // lock (call_order.h). A failure is recorded (CallFailures::failCall) and thrown.
  void execute(std::span<const CallArgs> requests, const std::function<CommIO&()>& prepare, bool deviceCall);
  // Replaces every rank's `times` with their average over the ranks, call by call (an allreduce through `io`,
  // numbered as calls are): what autotune's trials are judged by.
  void agreeTimes(std::vector<double>& times, CommIO& io);

  // Every call is counted in `metrics` (config metricsPort); null: not counted.
  void countIn(CommMetrics* metrics) { metrics_ = metrics; }
  // The algorithm of the last collective ("" before any, and after point-to-point calls): a static name.
  const char* lastAlgorithm() const { return lastAlgorithm_.load(std::memory_order_relaxed); }
  // The slice size the last collective ran with (0 before any, and after point-to-point calls).
  size_t lastSliceBytes() const { return lastSliceBytes_.load(std::memory_order_relaxed); }

 private:
  // One execute() under way.
  struct Call {
    bool deviceCall;
    const CallArgs* current;               // the op named if the call fails
    CommIO* io = nullptr;                  // prepare()'s
    CallTrace* trace = nullptr;            // null: not traced (device calls never are)
    const TransferTimes* times = nullptr;  // with transfer tracing: io's times of the call
    std::span<CallArgs> ops;               // the batch, numbered
    uint64_t firstRecord = 0;              // the flight record of ops[0] (ops[i]'s is firstRecord + i; 0: none)
  };
  // The flight record of `o` where it is one of the batch's calls (0 for a fused buffer, or when not recording).
  static uint64_t recordOf(const CallArgs& o, const Call& call) {
    if (call.firstRecord == 0 || &o < call.ops.data() || &o >= call.ops.data() + call.ops.size()) return 0;
    return call.firstRecord + static_cast<uint64_t>(&o - call.ops.data());
  }
  // Every call of the batch not yet ended ends failed; the record is dumped where the failure broke the
  // communicator.
  void recordFailure(const Call& call);
  // The requests numbered: a single call in `single` (on the caller's stack: no heap traffic per call), a batch in
  // the scratch.
  std::span<CallArgs> number(std::span<const CallArgs> requests, CallArgs& single);
  // Receives from any rank: which peer's message comes first decides the call (it runs alone, on host memory).
  void resolveAnySources(std::span<CallArgs> ops, Call& call);
  // The batch's sends and receives, posted together and completed together; returns how many there were.
  size_t runSendsAndReceives(std::span<CallArgs> ops, Call& call);
  // Its collectives in call order: alone, or a batch's with its allreduces fused where they fit.
  void runCollectives(std::span<CallArgs> ops, Call& call);
  void runFusedBatch(std::span<CallArgs> ops, Call& call);
  // One collective (`fused`: how many of the batch's calls it stands for, for the trace).
  void runCollective(const CallArgs& o, int fused, Call& call);

  const int rank_, size_;
  const double timeoutSeconds_;
  const std::string commName_;
  CallFailures& failures_;
  uint64_t seq_ = 0;
  CallTags tags_;  // what each call's frames carry
  std::unique_ptr<CallPlanner> planner_;
  std::unique_ptr<CallTrace> trace_;
  CommFlight* flight_ = nullptr;
  CompressionAgreement compression_;
  // The memory a batch reuses from call to call (grows, never shrinks; under the call lock).
  struct BatchScratch {
    std::vector<CallArgs> ops;                  // the batch being run, numbered
    std::vector<const CallArgs*> pointToPoint;  // its sends and receives
    FusionBuffer fusion;                   // its fused allreduces
  } scratch_;
  std::atomic<const char*> lastAlgorithm_{""};
  std::atomic<size_t> lastSliceBytes_{0};
  CommMetrics* metrics_ = nullptr;
};

}  // namespace chorus
