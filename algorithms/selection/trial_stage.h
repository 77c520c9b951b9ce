// One stage of a tuner's trials (the algorithm table's, autotune_table.h, and the fusion threshold's,
// fusion_tuner.h): each candidate runs its calls back to back (a a a b b b c c c), as an application's repeated
// calls of one size run, and each call's time is kept until the stage ends.
//
// Back to back, not interleaved (a b c a b c): a call that follows another algorithm's is slower by an amount that
// differs from algorithm to algorithm, and no application repeats such calls, so interleaved trials can pick the wrong
// one. The first call of each candidate's run is that transition call, and the first of an algorithm at a new size
// also allocates and first-touches its scratch memory (3-20x the calls that follow at 256 KiB-16 MiB). scores() leaves
// it out. Figures: perf/results/selection.md, "What the tuner's trials are made of".
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace chorus {

struct TrialStage {
  std::vector<int> schedule;  // the candidate of each call of the stage
  std::vector<double> times;  // each call's time, as far as the stage went

  // `passes` times over the candidates, each running `rounds` calls back to back per pass (a a b b c c a a b b c c).
  void start(size_t candidates, int rounds, int passes = 1) {
    clear();
    for (int pass = 0; pass < passes; ++pass) {
      for (size_t i = 0; i < candidates; ++i) {
        for (int r = 0; r < rounds; ++r) schedule.push_back(static_cast<int>(i));
      }
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
  // Each candidate's times that count.
  std::vector<std::vector<double>> counted(size_t candidates) const {
    std::vector<std::vector<double>> per(candidates);
    for (size_t i = 0; i < times.size(); ++i) {
      const bool first = i == 0 || schedule[i - 1] != schedule[i];
      const bool alone = i + 1 >= schedule.size() || schedule[i + 1] != schedule[i];
      if (first && !alone) continue;
      per[static_cast<size_t>(schedule[i])].push_back(times[i]);
    }
    return per;
  }
  // A call over this many times its candidate's fastest was disturbed (a slow spell of the machine: 3-20x, where two
  // undisturbed calls of one candidate differ by up to 1.44x in 95 of 100 pairs on the loopback 2x2).
  static constexpr double kDisturbed = 1.5;
  // Each candidate's score from the stage's (agreed) times, its run's first call left out where it has others: the
  // median of three or more calls; of two, their mean, or the faster where the other was disturbed. Not the faster of
  // two: one lucky call then outweighs a steady candidate (replayed on logged trials, the faster of two leaves more
  // buckets over 1.1x the best forced algorithm than the mean does: perf/results/selection.md, "What the tuner's
  // trials are made of").
  std::vector<double> scores(size_t candidates) const {
    std::vector<std::vector<double>> per = counted(candidates);
    std::vector<double> out;
    for (auto& v : per) {
      std::sort(v.begin(), v.end());
      if (v.empty()) {
        out.push_back(INFINITY);
      } else if (v.size() >= 3) {
        out.push_back(v[v.size() / 2]);
      } else {
        out.push_back(v.size() == 2 && v[1] <= kDisturbed * v[0] ? (v[0] + v[1]) / 2 : v[0]);
      }
    }
    return out;
  }
};

}  // namespace chorus
