// The order of a communicator's host calls, shared with the children split from it that share its connections:
// each call takes a number when it is issued (made blocking, or queued on a host stream) and runs when every call
// issued before it has finished, so that calls queued on several streams, and blocking calls made after them, run
// in the order they were issued, one at a time. A call that is issued always passes its turn on, whether it ran,
// failed or was skipped. Cheap for the common case: one thread making blocking calls never waits, and pays two
// locked instructions a call (its number and its pass), each about 10 ns on a VM.
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
  // goes back.) Where nobody waits, the last thing it touches is the word that passes the turn: a caller that has
  // passed its last turn is done with the order, and waitIdle may let it go (no count of callers inside needed).
  void pass(uint64_t number);
  // Wakes every waiter (an abort).
  void wakeAll();
  // True when every issued call has passed its turn on and no pass is still waking waiters.
  bool idle() const {
    return servingOf(state_.load(std::memory_order_acquire)) >= next_.load(std::memory_order_acquire) &&
           wakers_.load(std::memory_order_acquire) == 0;
  }

 private:
  // The turn being served (the count passed on, high bits) and the threads waiting for a turn (low bits) in one
  // word: passing the turn and learning whether anyone waits is one atomic step, so no waiter can register unseen
  // between the two, and a blocking call pays one locked instruction to pass its turn. 48 bits of turns: 2^48
  // calls, nearly a year of back-to-back calls at 10 million a second.
  static constexpr int kWaiterBits = 16;
  static constexpr uint64_t kOneWaiter = 1;
  static constexpr uint64_t kWaiterMask = (uint64_t{1} << kWaiterBits) - 1;
  static uint64_t servingOf(uint64_t state) { return state >> kWaiterBits; }
  static uint64_t waitersOf(uint64_t state) { return state & kWaiterMask; }

  std::atomic<uint64_t> next_{0};
  std::atomic<uint64_t> state_{0};
  // Passes that saw waiters and are still waking them: they touch the order after their turn has passed on.
  std::atomic<int> wakers_{0};
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
