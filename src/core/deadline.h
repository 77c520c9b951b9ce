// A point in time after which a wait gives up; every blocking wait in Chorus takes one.
#pragma once

#include <chrono>
#include <cstdint>

namespace chorus {

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;

  // A deadline `seconds` from now; seconds <= 0 means never.
  static Deadline after(double seconds) {
    if (seconds <= 0) return never();
    return Deadline(Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds)));
  }
  static Deadline never() { return Deadline(Clock::time_point::max()); }

  bool expired() const { return at_ != Clock::time_point::max() && Clock::now() >= at_; }
  bool isNever() const { return at_ == Clock::time_point::max(); }
  // Milliseconds left, clamped to [0, cap]; cap when never.
  int remainingMs(int cap) const {
    if (isNever()) return cap;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(at_ - Clock::now()).count();
    if (left < 0) return 0;
    return left > cap ? cap : static_cast<int>(left);
  }
  Clock::time_point at() const { return at_; }

 private:
  explicit Deadline(Clock::time_point at) : at_(at) {}
  Clock::time_point at_;
};

}  // namespace chorus
