#include "src/comm/call_order.h"

#include <chrono>

#include "device/poll_backoff.h"

namespace chorus {
namespace {

// Bounded waits: an abort, or a wakeup that raced with the wait, is seen within milliseconds.
constexpr auto kWaitPeriod = std::chrono::milliseconds(20);

}  // namespace

uint64_t CallOrder::issue() {
  uint64_t state = state_.load(std::memory_order_relaxed);
  PollBackoff backoff;
  for (;;) {
    const uint64_t next = nextOf(state);
    if (((next - servingOf(state)) & kNumberMask) >= kMaxOutstanding) {
      backoff.pause();
      state = state_.load(std::memory_order_relaxed);
      continue;
    }
    if (state_.compare_exchange_weak(state, withNext(state, next + 1), std::memory_order_relaxed)) return next;
  }
}

bool CallOrder::issueLockedIfIdle(uint64_t& number) {
  uint64_t state = state_.load(std::memory_order_relaxed);
  const uint64_t next = nextOf(state);
  if (next != servingOf(state) || (state & kLocked) != 0) return false;
  if (!state_.compare_exchange_strong(state, withNext(state, next + 1) | kLocked, std::memory_order_acquire,
                                      std::memory_order_relaxed)) {
    return false;
  }
  number = next;
  return true;
}

void CallOrder::waitTurn(uint64_t number, const std::atomic<bool>& aborted) {
  if (reached(servingOf(state_.load(std::memory_order_acquire)), number)) return;
  // Registering as a waiter reads the turn in the same step: a pass either comes after it (and sees the waiter) or
  // before it (and the turn read here is the passed one).
  if (!reached(servingOf(state_.fetch_add(kOneWaiter, std::memory_order_acq_rel)), number)) {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!reached(servingOf(state_.load(std::memory_order_acquire)), number) && !aborted.load()) {
      turned_.wait_for(lock, kWaitPeriod);
    }
  }
  state_.fetch_sub(kOneWaiter, std::memory_order_acq_rel);
}

bool CallOrder::tryLock() {
  uint64_t state = state_.load(std::memory_order_relaxed);
  while ((state & kLocked) == 0) {
    if (state_.compare_exchange_weak(state, state | kLocked, std::memory_order_acquire, std::memory_order_relaxed)) {
      return true;
    }
  }
  return false;
}

void CallOrder::lock() {
  if (tryLock()) return;
  // A waiter first, then the lock tried again: an unlock either comes after the registration (and wakes it) or
  // before the try (which then takes the lock).
  state_.fetch_add(kOneWaiter, std::memory_order_acq_rel);
  {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!tryLock()) turned_.wait_for(lock, kWaitPeriod);
  }
  state_.fetch_sub(kOneWaiter, std::memory_order_acq_rel);
}

void CallOrder::unlock() {
  changeAndWake([](uint64_t state) { return state & ~kLocked; });
}

void CallOrder::pass(uint64_t number) {
  changeAndWake([number](uint64_t state) { return passed(state, number); });
}

void CallOrder::unlockAndPass(uint64_t number) {
  changeAndWake([number](uint64_t state) { return passed(state & ~kLocked, number); });
}

template <class Change>
void CallOrder::changeAndWake(Change change) {
  uint64_t state = state_.load(std::memory_order_relaxed);
  bool waking = false;
  for (;;) {
    // Seen waiters: count this change as a waker before it lands, while the order cannot yet be let go.
    if (waitersOf(state) != 0 && !waking) {
      wakers_.fetch_add(1, std::memory_order_acq_rel);
      waking = true;
    }
    const uint64_t changed = change(state);
    if (changed == state) break;  // after an abort: a later call has passed already
    if (state_.compare_exchange_weak(state, changed, std::memory_order_acq_rel, std::memory_order_relaxed)) break;
  }
  if (!waking) return;
  wakeAll();
  wakers_.fetch_sub(1, std::memory_order_release);
}

void CallOrder::wakeAll() {
  std::lock_guard<std::mutex> lock(mutex_);
  turned_.notify_all();
}

}  // namespace chorus
