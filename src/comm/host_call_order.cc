#include "src/comm/host_call_order.h"

#include <chrono>

namespace chorus {

void HostCallOrder::waitTurn(uint64_t number, const std::atomic<bool>& aborted) {
  if (servingOf(state_.load(std::memory_order_acquire)) >= number) return;
  // Registering as a waiter reads the turn in the same step: a pass either comes after it (and sees the waiter) or
  // before it (and the turn read here is the passed one).
  if (servingOf(state_.fetch_add(kOneWaiter, std::memory_order_acq_rel)) < number) {
    std::unique_lock<std::mutex> lock(mutex_);
    // Bounded waits: an abort is seen within milliseconds even if its wakeup raced with the wait.
    while (servingOf(state_.load(std::memory_order_acquire)) < number && !aborted.load()) {
      turned_.wait_for(lock, std::chrono::milliseconds(20));
    }
  }
  state_.fetch_sub(kOneWaiter, std::memory_order_acq_rel);
}

void HostCallOrder::pass(uint64_t number) {
  uint64_t state = state_.load(std::memory_order_relaxed);
  bool waking = false;
  for (;;) {
    // Seen waiters: count this pass as a waker before the turn moves, while the order cannot yet be let go.
    if (waitersOf(state) != 0 && !waking) {
      wakers_.fetch_add(1, std::memory_order_acq_rel);
      waking = true;
    }
    if (servingOf(state) >= number + 1) break;  // after an abort: a later call has passed already
    const uint64_t turned = ((number + 1) << kWaiterBits) | waitersOf(state);
    if (state_.compare_exchange_weak(state, turned, std::memory_order_acq_rel, std::memory_order_relaxed)) break;
  }
  if (!waking) return;
  wakeAll();
  wakers_.fetch_sub(1, std::memory_order_release);
}

void HostCallOrder::wakeAll() {
  std::lock_guard<std::mutex> lock(mutex_);
  turned_.notify_all();
}

}  // namespace chorus
