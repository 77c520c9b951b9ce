// One stage of a tuner's trials (the algorithm table's, autotune_table.h, and the fusion threshold's,
// fusion_tuner.h): its candidates run interleaved (a b c a b c), so that a drift of the machine's speed weighs on
// every candidate alike, and each call's time is kept until the stage ends.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace chorus {

struct TrialStage {
  std::vector<int> schedule;  // the candidate of each call of the stage
  std::vector<double> times;  // each call's time, as far as the stage went

  void start(size_t candidates, int rounds) {
    clear();
    for (int r = 0; r < rounds; ++r) {
      for (size_t i = 0; i < candidates; ++i) schedule.push_back(static_cast<int>(i));
    }
  }
  void clear() {
    schedule.clear();
    times.clear();
  }
  // The candidate the next call runs.
  size_t next() const { return static_cast<size_t>(schedule[times.size()]); }
  // Records the next call's time; true when that was the stage's last call.
  bool record(double seconds) {
    times.push_back(seconds);
    return complete();
  }
  bool complete() const { return times.size() == schedule.size(); }
  // Each candidate's score from the stage's (agreed) times: the median of three or more calls, the best of fewer
  // (a lone slow call is noise far more often than a fast one).
  std::vector<double> scores(size_t candidates) const {
    std::vector<std::vector<double>> per(candidates);
    for (size_t i = 0; i < times.size(); ++i) per[static_cast<size_t>(schedule[i])].push_back(times[i]);
    std::vector<double> out;
    for (auto& v : per) {
      std::sort(v.begin(), v.end());
      out.push_back(v.empty() ? INFINITY : v.size() >= 3 ? v[v.size() / 2] : v.front());
    }
    return out;
  }
};

}  // namespace chorus
