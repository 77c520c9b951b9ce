// The window benches' summary of their rounds: the median, and how far the rounds spread around it.
#pragma once

#include <algorithm>
#include <vector>

namespace window_bench {

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// (max - min) / median, in percent.
inline double spread(const std::vector<double>& v) {
  if (v.empty()) return 0;
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return (*hi - *lo) / median(v) * 100;
}

}  // namespace window_bench
