// allreduce on thread worlds: every datatype x op x count x placement, under each algorithm.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "tests/collectives/case_matrix.h"
#include "tests/collectives/case_runner.h"
#include "tests/collectives/suite_knobs.h"
#include "tests/harness/scoped_env.h"

namespace chorus::test {
namespace {

class AllReduceTest : public ::testing::TestWithParam<std::tuple<int, std::string>> {};

TEST_P(AllReduceTest, EveryTypeOpCountPlacement) {
  const auto& [nranks, algo] = GetParam();
  ScopedEnv env(suiteKnobs({{"CHORUS_ALGO", algo.empty() ? std::nullopt : std::optional<std::string>(algo)}}));
  CaseGrid grid;
  grid.kind = CollectiveKind::kAllReduce;
  runCasesOnNewWorld(nranks, casesOf(grid), kCaseDeadline);
}

INSTANTIATE_TEST_SUITE_P(Worlds, AllReduceTest,
                         ::testing::Combine(::testing::Values(1, 2, 3, 4, 5, 8),
                                            ::testing::Values("ring", "recursive_doubling", "")),
                         [](const auto& info) {
                           std::string algo = std::get<1>(info.param);
                           return std::to_string(std::get<0>(info.param)) + "ranks_" +
                                  (algo.empty() ? std::string("bysize") : algo);
                         });

}  // namespace
}  // namespace chorus::test
