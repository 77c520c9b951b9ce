// allgather on thread worlds: every datatype x count x placement.
#include <gtest/gtest.h>

#include <string>

#include "tests/collectives/case_matrix.h"
#include "tests/collectives/case_runner.h"
#include "tests/collectives/suite_knobs.h"

namespace chorus::test {
namespace {

class AllGatherTest : public ::testing::TestWithParam<int> {};

TEST_P(AllGatherTest, EveryTypeCountPlacement) {
  const int nranks = GetParam();
  CaseGrid grid;
  grid.kind = CollectiveKind::kAllGather;
  runCasesOnNewWorld(nranks, casesOf(grid), kCaseDeadline);
}

INSTANTIATE_TEST_SUITE_P(Worlds, AllGatherTest, ::testing::Values(1, 2, 3, 4, 5, 8),
                         [](const auto& info) { return std::to_string(info.param) + "ranks"; });

}  // namespace
}  // namespace chorus::test
