// The order a communicator's calls run in, and the lock they run under; shared with the children split from it
// that share its connections.
//
// The order: each host call takes a number when it is issued (made blocking, or queued on a host stream) and runs
// when every call issued before it has passed its turn on, so that calls queued on several streams, and blocking
// calls made after them, run in the order they were issued. A call that is issued always passes its turn on,
// whether it ran, failed or was skipped.
//
// The call lock: whoever uses the connections holds it: a host call in its turn, a device call on the device
// queue's thread, a registration, a split taking the connections over. One holder at a time.
//
// Both live in one word, so that the common call, one thread making blocking calls on an otherwise idle
// communicator, takes its number, its turn and the lock in one locked instruction, and gives them back in one
// (each about 10 ns on a VM; a mutex beside the order cost two more).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace chorus {

class CallOrder {
 public:
  // The next call's number. Waits while 2^22 issued calls have not yet passed their turns (queued on host
  // streams): the numbers are counted modulo 2^24.
  uint64_t issue();
  // Returns once call `number` may run (every earlier one has passed its turn on), or once `aborted` is set.
  void waitTurn(uint64_t number, const std::atomic<bool>& aborted);
  // Call `number` has finished: the next may run. (After an abort calls may finish out of order; the turn never
  // goes back.) Where nobody waits, the last thing it touches is the word that passes the turn: a caller that has
  // passed its last turn is done with the order, and waitIdle may let it go (no count of callers inside needed).
  void pass(uint64_t number);

  // The call lock.
  void lock();
  bool tryLock();
  void unlock();
  // The common call: where no call is issued and unpassed and nobody holds the lock, issues `number`, whose turn
  // it is at once, and takes the lock, in one step; false (and nothing taken) otherwise.
  bool issueLockedIfIdle(uint64_t& number);
  // unlock() and pass(number) in one step.
  void unlockAndPass(uint64_t number);

  // Wakes every waiter (an abort).
  void wakeAll();
  // True when every issued call has passed its turn on and no pass is still waking waiters.
  bool idle() const {
    const uint64_t state = state_.load(std::memory_order_acquire);
    return nextOf(state) == servingOf(state) && wakers_.load(std::memory_order_acquire) == 0;
  }

 private:
  // The word, high bits to low: the next number to issue (24 bits), the turn being served (24), the threads
  // waiting for a turn or the lock (15), the lock (1). Numbers compare modulo 2^24; issue() keeps fewer than
  // 2^22 outstanding.
  static constexpr int kNumberBits = 24;
  static constexpr uint64_t kNumberMask = (uint64_t{1} << kNumberBits) - 1;
  static constexpr uint64_t kMaxOutstanding = uint64_t{1} << 22;
  static constexpr int kServingShift = 16, kNextShift = kServingShift + kNumberBits;
  static constexpr uint64_t kLocked = 1, kOneWaiter = 2, kWaiterMask = 0xfffe;
  static uint64_t nextOf(uint64_t state) { return state >> kNextShift; }
  static uint64_t servingOf(uint64_t state) { return (state >> kServingShift) & kNumberMask; }
  static uint64_t waitersOf(uint64_t state) { return state & kWaiterMask; }
  static uint64_t withServing(uint64_t state, uint64_t serving) {
    return (state & ~(kNumberMask << kServingShift)) | ((serving & kNumberMask) << kServingShift);
  }
  static uint64_t withNext(uint64_t state, uint64_t next) {
    return (state & ~(kNumberMask << kNextShift)) | ((next & kNumberMask) << kNextShift);
  }
  // Whether the turn being served has reached `number` (modulo 2^24: the served turn is never more than 2^22
  // behind or ahead of a number that is outstanding).
  static bool reached(uint64_t serving, uint64_t number) {
    return ((serving - number) & kNumberMask) < (uint64_t{1} << (kNumberBits - 1));
  }
  static uint64_t passed(uint64_t state, uint64_t number) {
    return reached(servingOf(state), number + 1) ? state : withServing(state, number + 1);
  }
  // Applies `change` to the word in one atomic step, and wakes the waiters it found.
  template <class Change>
  void changeAndWake(Change change);

  std::atomic<uint64_t> state_{0};
  // Passes that saw waiters and are still waking them: they touch the order after their turn has passed on.
  std::atomic<int> wakers_{0};
  std::mutex mutex_;
  std::condition_variable turned_;
};

// Holds `order`'s call lock in its scope.
class CallLocked {
 public:
  explicit CallLocked(CallOrder& order) : order_(order) { order_.lock(); }
  ~CallLocked() { order_.unlock(); }
  CallLocked(const CallLocked&) = delete;
  CallLocked& operator=(const CallLocked&) = delete;

 private:
  CallOrder& order_;
};

// Passes turn `number` of `order` on when it goes out of scope, however the call ends (a null order: the turn is
// not this caller's to pass).
class TurnPassedOnExit {
 public:
  TurnPassedOnExit(CallOrder* order, uint64_t number) : order_(order), number_(number) {}
  ~TurnPassedOnExit() {
    if (order_ != nullptr) order_->pass(number_);
  }
  TurnPassedOnExit(const TurnPassedOnExit&) = delete;
  TurnPassedOnExit& operator=(const TurnPassedOnExit&) = delete;

 private:
  CallOrder* order_;
  uint64_t number_;
};

// Gives back a turn taken with the lock (issueLockedIfIdle) when it goes out of scope, however the call ends.
class LockedTurnPassedOnExit {
 public:
  LockedTurnPassedOnExit(CallOrder& order, uint64_t number) : order_(order), number_(number) {}
  ~LockedTurnPassedOnExit() { order_.unlockAndPass(number_); }
  LockedTurnPassedOnExit(const LockedTurnPassedOnExit&) = delete;
  LockedTurnPassedOnExit& operator=(const LockedTurnPassedOnExit&) = delete;

 private:
  CallOrder& order_;
  uint64_t number_;
};

}  // namespace chorus
