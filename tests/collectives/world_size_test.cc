// More world sizes (odd, prime, past a power of two: recursive doubling's awkward cases) on a smaller grid.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "tests/collectives/case_matrix.h"
#include "tests/collectives/case_runner.h"
#include "tests/collectives/suite_knobs.h"

namespace chorus::test {
namespace {

class WorldSizeTest : public ::testing::TestWithParam<std::tuple<int, std::string>> {};

TEST_P(WorldSizeTest, EveryCollectiveOnASmallerGrid) {
  const auto& [nranks, algo] = GetParam();
  Config config = suiteConfig();
  config.algo = algo;
  std::vector<CollectiveCase> cases;
  for (CollectiveKind kind : {CollectiveKind::kAllReduce, CollectiveKind::kBroadcast, CollectiveKind::kReduce,
                              CollectiveKind::kAllGather, CollectiveKind::kReduceScatter}) {
    CaseGrid grid;
    grid.kind = kind;
    grid.types = {chorusUint8, chorusInt32, chorusFloat16, chorusFloat64};
    grid.counts = {1, 7, 5000};
    grid.roots = {0, nranks / 2, nranks - 1};
    std::vector<CollectiveCase> some = casesOf(grid, static_cast<uint32_t>(cases.size() + 1));
    cases.insert(cases.end(), some.begin(), some.end());
  }
  runCasesOnNewWorld(nranks, cases, kCaseDeadline, config);
}

INSTANTIATE_TEST_SUITE_P(Worlds, WorldSizeTest,
                         ::testing::Combine(::testing::Values(6, 7, 9, 13, 16),
                                            ::testing::Values("ring", "recursive_doubling", "tree",
                                                              "halving_doubling")),
                         [](const auto& info) {
                           return std::to_string(std::get<0>(info.param)) + "ranks_" + std::get<1>(info.param);
                         });

}  // namespace
}  // namespace chorus::test
