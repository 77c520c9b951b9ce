// allreduce on thread worlds: every datatype x op x count x placement, under each algorithm.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "tests/collectives/case_matrix.h"
#include "tests/collectives/case_runner.h"
#include "tests/collectives/suite_knobs.h"

namespace chorus::test {
namespace {

class AllReduceTest : public ::testing::TestWithParam<std::tuple<int, std::string>> {};

TEST_P(AllReduceTest, EveryTypeOpCountPlacement) {
  const auto& [nranks, algo] = GetParam();
  Config config = suiteConfig();
  config.algo = algo;  // empty: the model decides
  CaseGrid grid;
  grid.kind = CollectiveKind::kAllReduce;
  runCasesOnNewWorld(nranks, casesOf(grid), kCaseDeadline, config);
}

INSTANTIATE_TEST_SUITE_P(Worlds, AllReduceTest,
                         ::testing::Combine(::testing::Values(1, 2, 3, 4, 5, 8),
                                            ::testing::Values("ring", "recursive_doubling", "")),
                         [](const auto& info) {
                           std::string algo = std::get<1>(info.param);
                           return std::to_string(std::get<0>(info.param)) + "ranks_" +
                                  (algo.empty() ? std::string("bysize") : algo);
                         });

// The tree and halving-doubling algorithms on the whole grid, at a power of two and at a world that needs the fold.
INSTANTIATE_TEST_SUITE_P(TreeAndHalvingDoubling, AllReduceTest,
                         ::testing::Combine(::testing::Values(3, 4), ::testing::Values("tree", "halving_doubling")),
                         [](const auto& info) {
                           return std::to_string(std::get<0>(info.param)) + "ranks_" + std::get<1>(info.param);
                         });

// Chosen by size: counts either side of a switch from recursive doubling to ring written in CHORUS_ALGO's range
// syntax, at two switch points.
class AllReduceThresholdTest : public ::testing::TestWithParam<std::tuple<int, std::string>> {};

TEST_P(AllReduceThresholdTest, CountsAroundTheSwitch) {
  const auto& [nranks, threshold] = GetParam();
  Config config = suiteConfig();
  config.algo = "allreduce:0-" + threshold + "=recursive_doubling," + threshold + "-inf=ring";
  const size_t bytes = std::stoul(threshold);
  std::vector<CollectiveCase> cases;
  for (chorusDataType_t type : {chorusInt8, chorusFloat16, chorusFloat32, chorusFloat64}) {
    const size_t atThreshold = bytes / chorusTypeSize(type);
    CaseGrid grid;
    grid.kind = CollectiveKind::kAllReduce;
    grid.types = {type};
    grid.ops = {chorusSum, chorusMin, chorusAvg};
    grid.counts = {atThreshold - 1, atThreshold, atThreshold + 1};
    std::vector<CollectiveCase> some = casesOf(grid, static_cast<uint32_t>(cases.size() + 1));
    cases.insert(cases.end(), some.begin(), some.end());
  }
  runCasesOnNewWorld(nranks, cases, kCaseDeadline, config);
}

INSTANTIATE_TEST_SUITE_P(Worlds, AllReduceThresholdTest,
                         ::testing::Combine(::testing::Values(3, 8), ::testing::Values("65536", "4096")),
                         [](const auto& info) {
                           return std::to_string(std::get<0>(info.param)) + "ranks_threshold" + std::get<1>(info.param);
                         });

}  // namespace
}  // namespace chorus::test
