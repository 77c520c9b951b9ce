// reduce on thread worlds: every datatype x op x count x placement x root.
#include <gtest/gtest.h>

#include <string>

#include "tests/collectives/case_matrix.h"
#include "tests/collectives/case_runner.h"
#include "tests/collectives/suite_knobs.h"

namespace chorus::test {
namespace {

class ReduceTest : public ::testing::TestWithParam<int> {};

TEST_P(ReduceTest, EveryTypeOpCountRootPlacement) {
  const int nranks = GetParam();
  CaseGrid grid;
  grid.kind = CollectiveKind::kReduce;
  grid.roots = rootsFor(nranks);
  runCasesOnNewWorld(nranks, casesOf(grid), kCaseDeadline);
}

INSTANTIATE_TEST_SUITE_P(Worlds, ReduceTest, ::testing::Values(1, 2, 3, 4, 5, 8),
                         [](const auto& info) { return std::to_string(info.param) + "ranks"; });

}  // namespace
}  // namespace chorus::test
