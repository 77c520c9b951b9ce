// The fusion threshold's tuner (algorithms/selection/fusion_tuner.h) on made-up timings: it tries the configured
// threshold, an eighth and a sixty-fourth where they fuse the group differently, and no fusion, keeps another only
// when it wins by more than noise, and leaves groups it cannot change alone.
#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "algorithms/selection/fusion_tuner.h"

namespace chorus {
namespace {

constexpr size_t kThreshold = 64 << 20;

// Groups of the same shape until it settles; returns the threshold kept (or 0 past 50 groups) and the ones tried.
size_t settle(FusionTuner& t, size_t allreduces, size_t bytes, const std::function<double(size_t)>& time,
              std::set<size_t>* tried) {
  for (int group = 0; group < 50; ++group) {
    const FusionTuner::Pick p = t.pick(allreduces, bytes);
    if (!p.trial) return p.threshold;
    tried->insert(p.threshold);
    if (t.record(time(p.threshold))) t.finishStage();
  }
  return 0;
}

TEST(FusionTunerTest, KeepsASmallerThresholdThatWins) {
  FusionTuner t(kThreshold);
  std::set<size_t> tried;
  const size_t kept = settle(t, 200, 100 << 20, [](size_t th) { return th == kThreshold / 8 ? 1.0 : 2.0; }, &tried);
  EXPECT_EQ(kept, kThreshold / 8);
  EXPECT_EQ(tried, (std::set<size_t>{kThreshold, kThreshold / 8, kThreshold / 64, 0}));
  EXPECT_EQ(t.settled(), 1);
  EXPECT_EQ(t.pick(200, (100 << 20) + 1000).threshold, kThreshold / 8) << "same shape: settled";
  std::set<size_t> again;
  EXPECT_EQ(settle(t, 64, 64 << 20, [](size_t th) { return th == 0 ? 1.0 : 2.0; }, &again), 0u) << "unfused won";
}

TEST(FusionTunerTest, NoiseKeepsTheConfiguredThreshold) {
  FusionTuner t(kThreshold);
  std::set<size_t> tried;
  EXPECT_EQ(settle(t, 50, 32 << 20, [](size_t th) { return th == kThreshold ? 1.0 : 0.98; }, &tried), kThreshold);
}

TEST(FusionTunerTest, GroupsNoThresholdChangesAreNotTried) {
  FusionTuner t(kThreshold);
  EXPECT_FALSE(t.pick(1, 100 << 20).trial) << "one allreduce: nothing to fuse";
  std::set<size_t> tried;
  settle(t, 10, 4 << 20, [](size_t) { return 1.0; }, &tried);
  EXPECT_EQ(tried, (std::set<size_t>{kThreshold, kThreshold / 64, 0})) << "an eighth (8 MiB) fuses 4 MiB whole";
  FusionTuner off(0);
  EXPECT_EQ(off.pick(100, 100 << 20).threshold, 0u);
  EXPECT_FALSE(off.pick(100, 100 << 20).trial);
}

}  // namespace
}  // namespace chorus
