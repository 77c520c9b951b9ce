#include "src/comm/host_call_order.h"

#include <chrono>

namespace chorus {

void HostCallOrder::waitTurn(uint64_t number, const std::atomic<bool>& aborted) {
  if (serving_.load(std::memory_order_acquire) >= number) return;
  waiters_.fetch_add(1);
  std::unique_lock<std::mutex> lock(mutex_);
  // Bounded waits: an abort is seen within milliseconds even if its wakeup raced with the wait.
  while (serving_.load(std::memory_order_acquire) < number && !aborted.load()) {
    turned_.wait_for(lock, std::chrono::milliseconds(20));
  }
  waiters_.fetch_sub(1);
}

void HostCallOrder::pass(uint64_t number) {
  uint64_t current = serving_.load(std::memory_order_relaxed);
  while (current < number + 1 &&
         !serving_.compare_exchange_weak(current, number + 1, std::memory_order_acq_rel, std::memory_order_relaxed)) {
  }
  if (waiters_.load() > 0) wakeAll();
}

void HostCallOrder::wakeAll() {
  std::lock_guard<std::mutex> lock(mutex_);
  turned_.notify_all();
}

}  // namespace chorus
