// A histogram of durations that one thread observes and a scraper reads at any time: relaxed atomic counts per
// bucket and a sum, no lock and no allocation per observation. Buckets 1-2-5 per decade from 1 us to 50 s, and 60 s.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

namespace chorus::metrics {

class DurationHistogram {
 public:
  static constexpr size_t kBounds = 25;
  // The upper bounds, in seconds (what the `le` labels say) and in nanoseconds (what observe compares).
  static const std::array<double, kBounds>& boundsSeconds();
  static constexpr std::array<uint64_t, kBounds> kBoundsNs = {
      1'000,          2'000,          5'000,          10'000,        20'000,        50'000,        100'000,
      200'000,        500'000,        1'000'000,      2'000'000,     5'000'000,     10'000'000,    20'000'000,
      50'000'000,     100'000'000,    200'000'000,    500'000'000,   1'000'000'000, 2'000'000'000, 5'000'000'000,
      10'000'000'000, 20'000'000'000, 50'000'000'000, 60'000'000'000};

  void observe(uint64_t ns) {
    size_t i = 0;
    while (i < kBounds && ns > kBoundsNs[i]) ++i;
    counts_[i].fetch_add(1, std::memory_order_relaxed);
    sumNs_.fetch_add(ns, std::memory_order_relaxed);
  }
  // A copy of the counts (one per bound, then the overflow; not cumulative) and the sum in seconds.
  std::array<uint64_t, kBounds + 1> counts() const {
    std::array<uint64_t, kBounds + 1> out{};
    for (size_t i = 0; i < out.size(); ++i) out[i] = counts_[i].load(std::memory_order_relaxed);
    return out;
  }
  double sumSeconds() const { return static_cast<double>(sumNs_.load(std::memory_order_relaxed)) / 1e9; }

 private:
  std::array<std::atomic<uint64_t>, kBounds + 1> counts_{};
  std::atomic<uint64_t> sumNs_{0};
};

}  // namespace chorus::metrics
