// The order of a communicator's host calls, shared with the children split from it that share its connections:
// each call takes a number when it is issued (made blocking, or queued on a host stream) and runs when every call
// issued before it has finished, so that calls queued on several streams, and blocking calls made after them, run
// in the order they were issued, one at a time. A call that is issued always passes its turn on, whether it ran,
// failed or was skipped. Free for the common case: one thread making blocking calls never waits.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace chorus {

class HostCallOrder {
 public:
  // The next call's number.
  uint64_t issue() { return next_.fetch_add(1, std::memory_order_relaxed); }
  // Returns once call `number` may run (every earlier one has passed its turn on), or once `aborted` is set.
  void waitTurn(uint64_t number, const std::atomic<bool>& aborted);
  // Call `number` has finished: the next may run. (After an abort calls may finish out of order; the count never
  // goes back.)
  void pass(uint64_t number);
  // Wakes every waiter (an abort).
  void wakeAll();
  // True when every issued call has passed its turn on.
  bool idle() const { return serving_.load(std::memory_order_acquire) >= next_.load(std::memory_order_acquire); }

 private:
  std::atomic<uint64_t> next_{0};
  std::atomic<uint64_t> serving_{0};
  std::atomic<int> waiters_{0};
  std::mutex mutex_;
  std::condition_variable turned_;
};

// Passes turn `number` of `order` on when it goes out of scope, however the call ends (a null order: the turn is
// not this caller's to pass).
class TurnPassedOnExit {
 public:
  TurnPassedOnExit(HostCallOrder* order, uint64_t number) : order_(order), number_(number) {}
  ~TurnPassedOnExit() {
    if (order_ != nullptr) order_->pass(number_);
  }
  TurnPassedOnExit(const TurnPassedOnExit&) = delete;
  TurnPassedOnExit& operator=(const TurnPassedOnExit&) = delete;

 private:
  HostCallOrder* order_;
  uint64_t number_;
};

}  // namespace chorus
