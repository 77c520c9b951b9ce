#include "src/flight/flight_recorder.h"

#include <time.h>

#include "core/collective.h"

namespace chorus {
namespace {

int64_t clockNs(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return int64_t{t.tv_sec} * 1000000000 + t.tv_nsec;
}

constexpr auto kRelaxed = std::memory_order_relaxed;

}  // namespace

const char* flightStateName(FlightState s) {
  switch (s) {
    case FlightState::kQueued:
      return "queued";
    case FlightState::kRunning:
      return "running";
    case FlightState::kWaiting:
      return "waiting";
    case FlightState::kDone:
      return "done";
    case FlightState::kFailed:
      return "failed";
  }
  return "unknown";
}

FlightRecorder::FlightRecorder(size_t capacity, FlightIdentity id)
    : capacity_(capacity),
      id_(std::move(id)),
      slots_(capacity > 0 ? std::make_unique<Slot[]>(capacity) : nullptr),
      startNs_(clockNs(CLOCK_MONOTONIC_COARSE)),
      wallStartNs_(clockNs(CLOCK_REALTIME)) {}

uint32_t FlightRecorder::nowMs() const {
  // +1: 0 means "not yet" in a record.
  return static_cast<uint32_t>((clockNs(CLOCK_MONOTONIC_COARSE) - startNs_) / 1000000 + 1);
}

void FlightRecorder::opening(Slot& s) {
  s.version.store(s.version.load(kRelaxed) + 1, kRelaxed);
  std::atomic_thread_fence(std::memory_order_release);
}

void FlightRecorder::closing(Slot& s) { s.version.store(s.version.load(kRelaxed) + 1, std::memory_order_release); }

uint64_t FlightRecorder::begin(const CallArgs& op) {
  if (capacity_ == 0) return 0;
  const uint64_t ordinal = next_.load(kRelaxed) + 1;
  Slot& s = *slotOf(ordinal);
  opening(s);
  s.ordinal.store(ordinal, kRelaxed);
  s.seq.store(op.seq, kRelaxed);
  s.bytes.store(countBytes(op), kRelaxed);
  s.state.store(static_cast<uint8_t>(FlightState::kQueued), kRelaxed);
  s.collective.store(static_cast<uint8_t>(op.collective), kRelaxed);
  s.type.store(static_cast<uint8_t>(op.type), kRelaxed);
  s.reduction.store(static_cast<uint8_t>(op.reduction), kRelaxed);
  s.algorithm.store("", kRelaxed);
  s.rootOrPeer.store(op.root >= 0 ? op.root : op.peer, kRelaxed);
  s.waitingOn.store(-1, kRelaxed);
  s.waitingCount.store(0, kRelaxed);
  s.queuedMs.store(nowMs(), kRelaxed);
  s.waitingMs.store(0, kRelaxed);
  s.endMs.store(0, kRelaxed);
  closing(s);
  next_.store(ordinal, std::memory_order_release);
  return ordinal;
}

void FlightRecorder::running(uint64_t ordinal, const char* algorithm) {
  if (ordinal == 0) return;
  Slot& s = *slotOf(ordinal);
  opening(s);
  s.algorithm.store(algorithm, kRelaxed);
  s.state.store(static_cast<uint8_t>(FlightState::kRunning), kRelaxed);
  closing(s);
}

void FlightRecorder::waiting(uint64_t ordinal, int first, int count) {
  if (ordinal == 0) return;
  Slot& s = *slotOf(ordinal);
  if (s.state.load(kRelaxed) == static_cast<uint8_t>(FlightState::kWaiting) && s.waitingOn.load(kRelaxed) == first &&
      s.waitingCount.load(kRelaxed) == count) {
    return;  // nothing new: a long wait sleeps many times
  }
  opening(s);
  s.state.store(static_cast<uint8_t>(FlightState::kWaiting), kRelaxed);
  s.waitingOn.store(first, kRelaxed);
  s.waitingCount.store(count, kRelaxed);
  if (s.waitingMs.load(kRelaxed) == 0) s.waitingMs.store(nowMs(), kRelaxed);
  closing(s);
}

void FlightRecorder::end(uint64_t ordinal, bool ok) {
  if (ordinal == 0) return;
  Slot& s = *slotOf(ordinal);
  if (s.ordinal.load(kRelaxed) != ordinal || !flightPending(static_cast<FlightState>(s.state.load(kRelaxed)))) return;
  opening(s);
  s.state.store(static_cast<uint8_t>(ok ? FlightState::kDone : FlightState::kFailed), kRelaxed);
  s.waitingOn.store(-1, kRelaxed);
  s.waitingCount.store(0, kRelaxed);
  s.endMs.store(nowMs(), kRelaxed);
  closing(s);
  if (listener_ != nullptr) tell(ordinal);
}

void FlightRecorder::tell(uint64_t ordinal) {
  FlightCall call;
  if (read(ordinal, call)) listener_->callEnded(call);
}

bool FlightRecorder::read(uint64_t ordinal, FlightCall& out) const {
  const Slot& s = *slotOf(ordinal);
  // A writer holds a slot for a few stores; a reader that keeps meeting one gives the record up rather than spin.
  for (int attempt = 0; attempt < 64; ++attempt) {
    const uint32_t before = s.version.load(std::memory_order_acquire);
    if (before & 1) continue;
    out.ordinal = s.ordinal.load(kRelaxed);
    out.seq = s.seq.load(kRelaxed);
    out.bytes = s.bytes.load(kRelaxed);
    out.algorithm = s.algorithm.load(kRelaxed);
    out.state = static_cast<FlightState>(s.state.load(kRelaxed));
    out.collective = s.collective.load(kRelaxed);
    out.type = s.type.load(kRelaxed);
    out.reduction = s.reduction.load(kRelaxed);
    out.rootOrPeer = s.rootOrPeer.load(kRelaxed);
    out.waitingOn = s.waitingOn.load(kRelaxed);
    out.waitingCount = s.waitingCount.load(kRelaxed);
    out.queuedMs = s.queuedMs.load(kRelaxed);
    out.waitingMs = s.waitingMs.load(kRelaxed);
    out.endMs = s.endMs.load(kRelaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (s.version.load(kRelaxed) != before) continue;
    return out.ordinal == ordinal;  // else overwritten by a later call (the ring wrapped)
  }
  return false;
}

std::vector<FlightCall> FlightRecorder::snapshot(size_t newest) const {
  std::vector<FlightCall> calls;
  forEach([&](const FlightCall& c) { calls.push_back(c); }, newest);
  return calls;
}

uint32_t FlightRecorder::oldestPendingAgeMs() const {
  uint32_t oldest = 0;
  forEach([&](const FlightCall& c) {
    if (oldest == 0 && flightPending(c.state)) oldest = c.queuedMs;
  });
  if (oldest == 0) return 0;
  const uint32_t now = nowMs();
  return now > oldest ? now - oldest : 0;
}

}  // namespace chorus
