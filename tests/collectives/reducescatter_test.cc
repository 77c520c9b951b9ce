// reducescatter on thread worlds: every datatype x op x count x placement.
#include <gtest/gtest.h>

#include <string>

#include "tests/collectives/case_matrix.h"
#include "tests/collectives/case_runner.h"
#include "tests/collectives/suite_knobs.h"

namespace chorus::test {
namespace {

class ReduceScatterTest : public ::testing::TestWithParam<int> {};

TEST_P(ReduceScatterTest, EveryTypeOpCountPlacement) {
  const int nranks = GetParam();
  CaseGrid grid;
  grid.kind = CollectiveKind::kReduceScatter;
  // A reduce-scatter's count is each rank's block, so its buffers grow with the world: past 4 ranks the largest
  // count shrinks to keep them at 4 ranks' size, still many 4 KiB slices a block (8 ranks: 35001, 34 slices of
  // float32), where the full one made the 8-rank test 4x the 4-rank one.
  if (nranks > 4) grid.counts.back() = grid.counts.back() * 4 / static_cast<size_t>(nranks) | 1;
  runCasesOnNewWorld(nranks, casesOf(grid), kCaseDeadline);
}

INSTANTIATE_TEST_SUITE_P(Worlds, ReduceScatterTest, ::testing::Values(1, 2, 3, 4, 5, 8),
                         [](const auto& info) { return std::to_string(info.param) + "ranks"; });

// The ring with blocks far larger than what the links buffer (64 KiB shared rings, 4 KiB slices, 400 KB blocks):
// 3 and more ranks once waited on each other in a circle here (each for a forward queued behind its own first
// sends), 3 ranks at 16 MiB with the defaults.
class RingReduceScatterBufferingTest : public ::testing::TestWithParam<int> {};

TEST_P(RingReduceScatterBufferingTest, BlocksLargerThanTheLinksBufferDoNotDeadlock) {
  Config config = suiteConfig();
  config.algo = "ring";
  config.shmBufferBytes = 64 << 10;
  CaseGrid grid;
  grid.kind = CollectiveKind::kReduceScatter;
  grid.types = {chorusInt32};
  grid.ops = {chorusSum};
  grid.counts = {100001};
  runCasesOnNewWorld(GetParam(), casesOf(grid), kCaseDeadline, config);
}

INSTANTIATE_TEST_SUITE_P(Worlds, RingReduceScatterBufferingTest, ::testing::Values(3, 4, 5),
                         [](const auto& info) { return std::to_string(info.param) + "ranks"; });

}  // namespace
}  // namespace chorus::test
