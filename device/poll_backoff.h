// Waiting for a condition that nobody signals (a device event, a flag in pinned memory): spin a few rounds for the
// fast case, then yield, then sleep with a growing period, so that a long wait costs no core on a small machine
// while a short one still returns within microseconds.
#pragma once

#include <time.h>

#include <algorithm>
#include <chrono>
#include <thread>

namespace chorus {

class PollBackoff {
 public:
  // Waits a little longer than the previous call did (nothing for the first few calls, at most maxSleep).
  void pause() {
    ++rounds_;
    if (rounds_ <= kSpinRounds) return;
    if (rounds_ <= kSpinRounds + kYieldRounds) {
      std::this_thread::yield();
      return;
    }
    std::this_thread::sleep_for(sleep_);
    sleep_ = std::min(sleep_ * 2, kMaxSleep);
  }
  // For waits that sleep on their own (a futex with a timeout): the period to sleep now, zero while still
  // spinning; yields itself during the yielding rounds.
  timespec nextSleep() {
    ++rounds_;
    if (rounds_ <= kSpinRounds) return timespec{0, 0};
    if (rounds_ <= kSpinRounds + kYieldRounds) {
      std::this_thread::yield();
      return timespec{0, 0};
    }
    const timespec period{0, static_cast<long>(std::chrono::nanoseconds(sleep_).count())};
    sleep_ = std::min(sleep_ * 2, kMaxSleep);
    return period;
  }
  // Starts over from spinning (after progress was made).
  void reset() {
    rounds_ = 0;
    sleep_ = kFirstSleep;
  }

 private:
  static constexpr int kSpinRounds = 16;
  static constexpr int kYieldRounds = 48;
  static constexpr std::chrono::microseconds kFirstSleep{2};
  static constexpr std::chrono::microseconds kMaxSleep{1000};
  int rounds_ = 0;
  std::chrono::microseconds sleep_ = kFirstSleep;
};

}  // namespace chorus
