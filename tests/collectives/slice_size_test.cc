// Every collective under slice sizes that are not a multiple of the element size (CHORUS_CHUNK_SIZE is bytes).
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "tests/collectives/case_matrix.h"
#include "tests/collectives/case_runner.h"
#include "tests/collectives/suite_knobs.h"

namespace chorus::test {
namespace {

class SliceSizeTest : public ::testing::TestWithParam<std::tuple<int, std::string>> {};

TEST_P(SliceSizeTest, EveryCollective) {
  const auto& [nranks, sliceBytes] = GetParam();
  Config config = suiteConfig();
  config.chunkSize = std::stoul(sliceBytes);
  std::vector<CollectiveCase> cases;
  for (CollectiveKind kind : {CollectiveKind::kAllReduce, CollectiveKind::kBroadcast, CollectiveKind::kReduce,
                              CollectiveKind::kAllGather, CollectiveKind::kReduceScatter}) {
    CaseGrid grid;
    grid.kind = kind;
    grid.types = {chorusInt8, chorusFloat16, chorusFloat32, chorusFloat64};
    grid.ops = {chorusSum, chorusMin};
    grid.counts = {1000, 5001, 40000};
    grid.roots = {nranks - 1};
    std::vector<CollectiveCase> some = casesOf(grid, static_cast<uint32_t>(cases.size() + 1));
    cases.insert(cases.end(), some.begin(), some.end());
  }
  runCasesOnNewWorld(nranks, cases, kCaseDeadline, config);
}

INSTANTIATE_TEST_SUITE_P(Worlds, SliceSizeTest,
                         ::testing::Combine(::testing::Values(3, 4), ::testing::Values("4099", "6002")),
                         [](const auto& info) {
                           return std::to_string(std::get<0>(info.param)) + "ranks_slice" + std::get<1>(info.param);
                         });

}  // namespace
}  // namespace chorus::test
