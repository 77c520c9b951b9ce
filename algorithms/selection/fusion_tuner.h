// CHORUS_AUTOTUNE for groups: the fusion threshold (Horovod's HOROVOD_FUSION_THRESHOLD, which its autotuner tunes). A
// training step runs the same group of gradients' allreduces again and again, so the tuner keys on the group's shape
// (how many allreduces, and their total bytes as a power of two) and runs it with the communicator's threshold
// (CHORUS_FUSION_THRESHOLD), an eighth and a sixty-fourth of it, and unfused, three times each, back to back (the first
// of each not counted, trial_stage.h); another must beat the configured one's score by 3% to be kept. Thresholds at or
// above the group's total fuse it as the configured one does and are not tried. Fusion saves a call's latency per
// tensor but packs, unpacks, and reduces larger buffers, which run slower per byte where smaller ones stayed in cache,
// so the best threshold depends on the group (perf/results/compression_fusion.md, "The fusion threshold"). Like the
// algorithm table, this is bookkeeping only: the communicator times each group and agrees each stage's times across
// ranks before finishStage(), so that every rank fuses alike.
#pragma once

#include <cstddef>
#include <map>
#include <utility>
#include <vector>

#include "algorithms/selection/trial_stage.h"

namespace chorus {

class FusionTuner {
 public:
  static constexpr int kRounds = 3;
  static constexpr double kMargin = 0.97;

  explicit FusionTuner(size_t threshold) : threshold_(threshold) {}

  struct Pick {
    size_t threshold = 0;
    bool trial = false;  // the group's time goes to record()
  };
  // The threshold for a group of `allreduces` fusable allreduces of `bytes` in all.
  Pick pick(size_t allreduces, size_t bytes);
  // The time of the trial pick() just returned; true when it ended its stage (stageTimes() to be agreed, then
  // finishStage()).
  bool record(double seconds);
  std::vector<double>& stageTimes();
  void finishStage();
  // Shapes settled so far, and the threshold each kept (for the log).
  int settled() const { return settled_; }
  size_t lastSettledThreshold() const { return lastSettled_; }

 private:
  struct Shape {
    bool settled = false;
    std::vector<size_t> candidates;  // [0]: the configured threshold
    TrialStage stage;
    size_t best = 0;
  };
  size_t threshold_;
  std::map<std::pair<size_t, int>, Shape> shapes_;
  Shape* pending_ = nullptr;
  int settled_ = 0;
  size_t lastSettled_ = 0;
};

}  // namespace chorus
