#include "src/comm/call_runner.h"

#include <algorithm>
#include <chrono>

#include "core/error.h"
#include "core/logging.h"
#include "src/comm/call_description.h"
#include "src/comm/point_to_point.h"

namespace chorus {
namespace {

std::chrono::steady_clock::time_point startedIf(bool trial) {
  return trial ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
}

double secondsSince(std::chrono::steady_clock::time_point began) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
}

}  // namespace

CallRunner::CallRunner(int rank, int size, const CommConfig& config, CallFailures& failures, uint64_t tagSalt)
    : rank_(rank),
      size_(size),
      timeoutSeconds_(config.timeoutSeconds),
      commName_(config.commName),
      failures_(failures),
      // checkMismatch off: frames carry no call identity, sizes are still checked.
      tags_(size, config.checkMismatch, tagSalt),
      compression_(rank, size) {}

void CallRunner::execute(std::span<const CallArgs> requests, const std::function<CommIO&()>& prepare, bool deviceCall) {
  const CommMetrics::UnderWay counted(metrics_);
  CommLogScope logScope(commName_);
  CallArgs single;
  const std::span<CallArgs> ops = number(requests, single);
  if (ops.empty()) return;
  Call call{.deviceCall = deviceCall, .current = &ops[0], .ops = ops};
  if (flight_ != nullptr) {
    FlightRecorder& recorder = flight_->recorder();
    for (const CallArgs& o : ops) {
      const uint64_t record = recorder.begin(o);
      if (call.firstRecord == 0) call.firstRecord = record;
    }
  }
  try {
    failures_.refuseIfUnusable([&] { return errorContext(rank_, describeCall(ops[0])); });
    call.io = &prepare();
    if (flight_ != nullptr) call.io->recordWaitsIn(&flight_->recorder(), call.firstRecord);
    // A lone collective, the common call, has no point-to-point part to resolve or run.
    const bool loneCollective = ops.size() == 1 && !isPointToPoint(ops[0].collective);
    if (!loneCollective) resolveAnySources(ops, call);
    // Tracing (config traceDir): one event per call; with transfer tracing, CommIO's times of the call.
    call.trace = deviceCall ? nullptr : trace_.get();
    call.times = call.trace && call.trace->level() == TraceLevel::kTransfer ? &call.io->times() : nullptr;
    const size_t pointToPoint = loneCollective ? 0 : runSendsAndReceives(ops, call);
    if (pointToPoint < ops.size()) runCollectives(ops, call);
  } catch (const Error& raw) {
    Error e = failures_.failCall(raw, *call.current, deviceCall, tags_.collectiveNumber());
    recordFailure(call);
    throw e;
  }
}

void CallRunner::recordFailure(const Call& call) {
  if (flight_ == nullptr) return;
  for (size_t i = 0; i < call.ops.size() && call.firstRecord != 0; ++i)
    flight_->recorder().end(call.firstRecord + i, false);
  if (failures_.state().unusable()) flight_->dump("a failed call");
}

std::span<CallArgs> CallRunner::number(std::span<const CallArgs> requests, CallArgs& single) {
  std::span<CallArgs> ops;
  if (requests.size() == 1) {
    single = requests[0];
    ops = std::span<CallArgs>(&single, 1);
  } else {
    scratch_.ops.assign(requests.begin(), requests.end());
    ops = scratch_.ops;
  }
  for (CallArgs& o : ops) o.seq = seq_++;
  return ops;
}

void CallRunner::resolveAnySources(std::span<CallArgs> ops, Call& call) {
  for (CallArgs& o : ops) {
    if (o.peer != kAnyPeer) continue;
    call.current = &o;
    if (call.deviceCall || ops.size() != 1) {
      throw Error(chorusInvalidUsage, errorContext(rank_, describeCall(o)) +
                                          ": a receive from any rank runs alone, on host memory (not in a group, "
                                          "not on device buffers)");
    }
    call.io->begin(tags_, LazyDeadline::after(timeoutSeconds_), &o);
    o.peer = call.io->waitForAnySender(tags_, o.type);
    if (o.source) *o.source = o.peer;
  }
}

size_t CallRunner::runSendsAndReceives(std::span<CallArgs> ops, Call& call) {
  std::vector<const CallArgs*>& pointToPoint = scratch_.pointToPoint;
  pointToPoint.clear();
  for (const CallArgs& o : ops) {
    if (isPointToPoint(o.collective)) pointToPoint.push_back(&o);
  }
  if (pointToPoint.empty()) return 0;
  call.current = pointToPoint.front();
  CHORUS_TRACE(rank_, describeCall(*call.current) << " and " << pointToPoint.size() - 1 << " more point-to-point");
  const double start = call.trace ? CallTrace::nowUs() : 0;
  FlightRecorder* recorder = flight_ != nullptr ? &flight_->recorder() : nullptr;
  if (recorder != nullptr) {
    for (const CallArgs* o : pointToPoint) recorder->running(recordOf(*o, call), "");
    call.io->recordWaitsIn(recorder, recordOf(*call.current, call));
  }
  runPointToPoint(*call.io, tags_, pointToPoint, LazyDeadline::after(timeoutSeconds_));
  if (recorder != nullptr) {
    for (const CallArgs* o : pointToPoint) recorder->end(recordOf(*o, call), true);
  }
  lastAlgorithm_.store("", std::memory_order_relaxed);
  lastSliceBytes_.store(0, std::memory_order_relaxed);
  if (call.trace) {
    call.trace->recordCall(*call.current, nullptr, 0, start, CallTrace::nowUs(), call.times,
                           static_cast<int>(pointToPoint.size()));
  }
  if (metrics_ != nullptr) {
    for (const CallArgs* o : pointToPoint) metrics_->ran(o->collective, CommMetrics::kNoAlgorithm, countBytes(*o), 1);
  }
  return pointToPoint.size();
}

void CallRunner::runCollectives(std::span<CallArgs> ops, Call& call) {
  if (ops.size() == 1) {
    runCollective(ops[0], 1, call);
  } else {
    runFusedBatch(ops, call);
  }
}

void CallRunner::runFusedBatch(std::span<CallArgs> ops, Call& call) {
  // Host buffers only are fused: the fusion buffer is host memory (the planner says so for device calls).
  const BatchPlan batch = planner_->planBatch(ops, call.deviceCall);
  const auto began = startedIf(batch.trial);
  for (const std::vector<size_t>& entry : planFusion(ops, batch.fusionThreshold)) {
    if (entry.size() == 1) {
      runCollective(ops[entry.front()], 1, call);
      continue;
    }
    if (flight_ != nullptr) {
      for (size_t i : entry) flight_->recorder().running(recordOf(ops[i], call), "fused");
    }
    const CallArgs& fused = scratch_.fusion.fuse(ops, entry);
    if (scratch_.fusion.packed()) {
      CHORUS_TRACE(rank_, entry.size() << " allreduces fused into " << countBytes(fused) << " bytes");
    }
    runCollective(fused, static_cast<int>(entry.size()), call);
    scratch_.fusion.unpack(ops, entry);
    if (flight_ != nullptr) {
      for (size_t i : entry) flight_->recorder().end(recordOf(ops[i], call), true);
    }
  }
  if (batch.trial) {
    planner_->recordBatchTrial(secondsSince(began), [&](std::vector<double>& t) { agreeTimes(t, *call.io); });
  }
}

namespace {

// The plan's algorithm over the call, in pieces of plan.segmentBytes where the plan cuts it (an allreduce: every
// element's result depends on that element alone, so each piece is a whole call).
void runInSegments(const CallPlan& plan, CommIO& io, const CallArgs& op) {
  if (plan.segmentBytes == 0 || countBytes(op) <= plan.segmentBytes) {
    plan.run(io, op);
    return;
  }
  const size_t es = typeSize(op.type);
  const size_t per = plan.segmentBytes / es;
  if (per == 0) {
    plan.run(io, op);
    return;
  }
  CallArgs piece = op;
  for (size_t first = 0; first < op.count; first += per) {
    piece.send = static_cast<const char*>(op.send) + first * es;
    piece.recv = static_cast<char*>(op.recv) + first * es;
    piece.count = std::min(per, op.count - first);
    plan.run(io, piece);
  }
}

}  // namespace

void CallRunner::runCollective(const CallArgs& o, int fused, Call& call) {
  call.current = &o;
  CommIO& io = *call.io;
  const double start = call.trace ? CallTrace::nowUs() : 0;
  tags_.begin(o);
  const CallPlan plan = planner_->plan(o, size_, call.deviceCall);
  CHORUS_TRACE(rank_, describeCall(o) << " via " << algorithmName(plan.algorithm));
  // Compressed calls whose ranks must agree run in place: every send then comes from memory the call may round.
  const CallArgs& run = compression_.inPlace(o, call.deviceCall);
  io.begin(tags_, LazyDeadline::after(timeoutSeconds_), &run);
  io.setSliceBytes(plan.sliceBytes);
  io.setStripeWidth(plan.stripeWidth);
  // A fused buffer's calls were marked running by the batch, and its waits go to the batch's first call.
  const uint64_t record = recordOf(o, call);
  if (flight_ != nullptr) {
    flight_->recorder().running(record, algorithmName(plan.algorithm));
    io.recordWaitsIn(&flight_->recorder(), record != 0 ? record : call.firstRecord);
  }
  const auto began = startedIf(plan.trial);
  runInSegments(plan, io, run);
  if (io.compressor().active()) compression_.roundResults(run);
  if (metrics_ != nullptr) {
    metrics_->ran(o.collective, CommMetrics::algorithmSlot(plan.algorithm), countBytes(o), fused);
  }
  if (plan.trial) planner_->recordTrial(secondsSince(began), [&](std::vector<double>& t) { agreeTimes(t, io); });
  if (call.trace) {
    call.trace->recordCall(o, algorithmName(plan.algorithm), io.sliceBytes(), start, CallTrace::nowUs(), call.times,
                           fused);
  }
  lastAlgorithm_.store(algorithmName(plan.algorithm), std::memory_order_relaxed);
  lastSliceBytes_.store(io.sliceBytes(), std::memory_order_relaxed);
  if (flight_ != nullptr) flight_->recorder().end(record, true);
}

// The average over the ranks, not the slowest rank's time: back to back, each rank's time per call is the interval
// between its calls' ends, what the application sees; the slowest of four ranks on 2 cores adds each call's worst
// scheduling delay, which weighs on some algorithms more than others (perf/results/selection.md, "What the tuner's
// trials are made of").
void CallRunner::agreeTimes(std::vector<double>& times, CommIO& io) {
  CallArgs agree;
  agree.collective = Collective::kAllReduce;
  agree.send = times.data();
  agree.recv = times.data();
  agree.count = times.size();
  agree.type = chorusFloat64;
  agree.reduction = chorusSum;
  agree.seq = seq_++;
  tags_.begin(agree);
  io.begin(tags_, LazyDeadline::after(timeoutSeconds_), &agree);
  const CallPlan plan = planner_->planUntuned(agree, size_);
  io.setSliceBytes(plan.sliceBytes);
  io.setStripeWidth(plan.stripeWidth);
  plan.run(io, agree);
  for (double& t : times) t /= size_;
}

}  // namespace chorus
