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

// A deadline whose clock starts at the first look. A small call that never waits long reads no clock (a
// clock_gettime costs ~20 ns on a VM, a fifth of such a call's own work); one that waits looks within a few
// microseconds, so its deadline starts that much late.
class LazyDeadline {
 public:
  LazyDeadline() : deadline_(Deadline::never()) {}
  // `seconds` from the first look; seconds <= 0 means never.
  static LazyDeadline after(double seconds) {
    LazyDeadline d;
    d.seconds_ = seconds;
    d.started_ = seconds <= 0;
    return d;
  }
  // A deadline fixed already.
  static LazyDeadline at(Deadline fixed) {
    LazyDeadline d;
    d.deadline_ = fixed;
    return d;
  }

  const Deadline& get() {
    if (!started_) {
      deadline_ = Deadline::after(seconds_);
      started_ = true;
    }
    return deadline_;
  }

 private:
  Deadline deadline_;
  double seconds_ = 0;
  bool started_ = true;
};

}  // namespace chorus
