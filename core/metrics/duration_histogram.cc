#include "core/metrics/duration_histogram.h"

namespace chorus::metrics {

const std::array<double, DurationHistogram::kBounds>& DurationHistogram::boundsSeconds() {
  static const std::array<double, kBounds> bounds = [] {
    std::array<double, kBounds> b{};
    for (size_t i = 0; i < kBounds; ++i)
      b[i] = static_cast<double>(kBoundsNs[i]) / 1e9;  // 1000 / 1e9 is 1e-06 exactly as written
    return b;
  }();
  return bounds;
}

}  // namespace chorus::metrics
