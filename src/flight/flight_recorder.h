// A communicator's flight recorder: its last N calls in a preallocated ring of fixed-size entries, written by the
// thread running the call (under the call lock: one writer at a time) and read by any thread at any time. Each
// entry is a seqlock: a reader copies it and keeps the copy only if its version did not move meanwhile, so the
// writer never waits and never allocates (the calls pay a few relaxed stores and a coarse clock read).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "src/flight/flight_call.h"

namespace chorus {

struct CallArgs;

// Who the recorder belongs to: what its JSON names (the inspector groups ranks by identity).
struct FlightIdentity {
  std::string commName;  // "" unnamed
  std::string identity;  // alike on every rank of the communicator (CommEngine::identity)
  int rank = 0, size = 1;
};

// Told of each call as it ends (on the thread that ran it, after the record is written): the metrics' hook.
class FlightListener {
 public:
  virtual ~FlightListener() = default;
  virtual void callEnded(const FlightCall& call) = 0;
};

class FlightRecorder {
 public:
  // capacity 0: records nothing (every writer call returns at once, the readers see no calls).
  FlightRecorder(size_t capacity, FlightIdentity id);
  FlightRecorder(const FlightRecorder&) = delete;
  FlightRecorder& operator=(const FlightRecorder&) = delete;

  // The writer's side. begin returns the record's ordinal (0 when not recording), which the others take.
  uint64_t begin(const CallArgs& op);
  void running(uint64_t ordinal, const char* algorithm);
  // The call sleeps waiting for `count` ranks, the first of them `first` (the time is kept from the first sleep).
  void waiting(uint64_t ordinal, int first, int count);
  // Done or failed; a record already ended is left alone.
  void end(uint64_t ordinal, bool ok);
  void setListener(FlightListener* listener) { listener_ = listener; }  // before the first call; null: none

  // The readers' side, from any thread, never blocking the writer.
  // Calls every kept record, oldest first, with a consistent copy; a record overwritten while read is skipped.
  template <class Fn>
  void forEach(Fn fn, size_t newest = SIZE_MAX) const;
  std::vector<FlightCall> snapshot(size_t newest = SIZE_MAX) const;
  // The age of the oldest call not yet ended, in ms (0 when none): what a monitor alarms on.
  uint32_t oldestPendingAgeMs() const;
  uint64_t recorded() const { return next_.load(std::memory_order_acquire); }
  size_t capacity() const { return capacity_; }
  const FlightIdentity& identity() const { return id_; }
  // Milliseconds since the recorder started, on its clock (the records' time base).
  uint32_t nowMs() const;
  // The wall clock (ns since the epoch) when the recorder started: a record's wall time is this plus its ms.
  int64_t wallStartNs() const { return wallStartNs_; }

 private:
  // 64 bytes: one cache line per call.
  struct alignas(64) Slot {
    std::atomic<uint32_t> version{0};  // odd while written
    std::atomic<uint8_t> state{0}, collective{0}, type{0}, reduction{0};
    std::atomic<uint64_t> ordinal{0}, seq{0}, bytes{0};
    std::atomic<const char*> algorithm{""};
    std::atomic<int32_t> rootOrPeer{-1}, waitingOn{-1}, waitingCount{0};
    std::atomic<uint32_t> queuedMs{0}, waitingMs{0}, endMs{0};
  };
  static_assert(sizeof(Slot) == 64, "one cache line per record");

  Slot* slotOf(uint64_t ordinal) { return &slots_[(ordinal - 1) % capacity_]; }
  const Slot* slotOf(uint64_t ordinal) const { return &slots_[(ordinal - 1) % capacity_]; }
  // The writer's bracket around a change of one slot (the seqlock).
  static void opening(Slot& s);
  static void closing(Slot& s);
  bool read(uint64_t ordinal, FlightCall& out) const;
  void tell(uint64_t ordinal);

  const size_t capacity_;
  const FlightIdentity id_;
  std::unique_ptr<Slot[]> slots_;
  std::atomic<uint64_t> next_{0};  // records begun
  int64_t startNs_;                // the coarse monotonic clock at start
  int64_t wallStartNs_;
  FlightListener* listener_ = nullptr;
};

template <class Fn>
void FlightRecorder::forEach(Fn fn, size_t newest) const {
  if (capacity_ == 0) return;
  const uint64_t last = next_.load(std::memory_order_acquire);
  uint64_t keep = last < capacity_ ? last : capacity_;
  if (keep > newest) keep = newest;
  FlightCall call;
  for (uint64_t ordinal = last - keep + 1; ordinal <= last; ++ordinal) {
    if (read(ordinal, call)) fn(call);
  }
}

}  // namespace chorus
