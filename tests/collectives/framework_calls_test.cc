// What frameworks call beyond the classic five: alltoall, alltoallv, gather, scatter and a ring of sends and
// receives in a group, every datatype x count x root x placement, on worlds of 1 to 16 ranks; and the barrier.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <tuple>
#include <vector>

#include "tests/collectives/case_matrix.h"
#include "tests/collectives/case_runner.h"
#include "tests/collectives/suite_knobs.h"

namespace chorus::test {
namespace {

const CollectiveKind kKinds[] = {CollectiveKind::kAllToAll, CollectiveKind::kAllToAllv, CollectiveKind::kGather,
                                 CollectiveKind::kScatter, CollectiveKind::kSendRecv};

class FrameworkCallsTest : public ::testing::TestWithParam<int> {};

// Every datatype and count on the small worlds (every root); fewer types on the large ones.
TEST_P(FrameworkCallsTest, EveryTypeCountRootPlacement) {
  const int nranks = GetParam();
  std::vector<CollectiveCase> cases;
  for (CollectiveKind kind : kKinds) {
    CaseGrid grid;
    grid.kind = kind;
    grid.roots = rootsFor(nranks);
    if (nranks > 5) {
      grid.types = {chorusUint8, chorusFloat16, chorusFloat64};
      grid.counts = {0, 1, 7, 5000};
    } else if (nranks > 3) {
      // Counts are per peer (alltoall) or per rank (gather, scatter), so buffers grow with the world: the largest
      // shrinks to keep them at 3 ranks' size, still many 4 KiB slices (5 ranks: 42001).
      grid.counts.back() = grid.counts.back() * 3 / static_cast<size_t>(nranks) | 1;
    }
    std::vector<CollectiveCase> some = casesOf(grid, static_cast<uint32_t>(cases.size() + 1));
    cases.insert(cases.end(), some.begin(), some.end());
  }
  runCasesOnNewWorld(nranks, cases, kCaseDeadline);
}

INSTANTIATE_TEST_SUITE_P(Worlds, FrameworkCallsTest, ::testing::Values(1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 16),
                         [](const auto& info) { return std::to_string(info.param) + "ranks"; });

// Each algorithm of each new collective, forced through the config, on an odd and an even world.
class FrameworkAlgorithmTest : public ::testing::TestWithParam<std::tuple<int, std::string>> {};

TEST_P(FrameworkAlgorithmTest, ForcedAlgorithm) {
  const auto& [nranks, algo] = GetParam();
  Config config = suiteConfig();
  config.algo = algo;
  std::vector<CollectiveCase> cases;
  for (CollectiveKind kind : kKinds) {
    CaseGrid grid;
    grid.kind = kind;
    grid.roots = {0, nranks - 1};
    grid.types = {chorusInt8, chorusBfloat16, chorusFloat32};
    grid.counts = {0, 1, 7, 1000, 70001};
    std::vector<CollectiveCase> some = casesOf(grid, static_cast<uint32_t>(cases.size() + 1));
    cases.insert(cases.end(), some.begin(), some.end());
  }
  runCasesOnNewWorld(nranks, cases, kCaseDeadline, config);
}

INSTANTIATE_TEST_SUITE_P(Algorithms, FrameworkAlgorithmTest,
                         ::testing::Combine(::testing::Values(3, 4, 7),
                                            ::testing::Values("alltoall:pairwise;gather:direct;scatter:direct",
                                                              "alltoall:bruck;gather:binomial;scatter:binomial")),
                         [](const auto& info) {
                           const std::string& a = std::get<1>(info.param);
                           return std::to_string(std::get<0>(info.param)) + "ranks_" +
                                  (a.find("bruck") != std::string::npos ? "bruck_binomial" : "pairwise_direct");
                         });

// No rank leaves a barrier before every rank has entered it: each rank counts itself in before, and checks after
// that everyone had.
class BarrierTest : public ::testing::TestWithParam<int> {};

TEST_P(BarrierTest, NoRankLeavesBeforeAllEntered) {
  const int nranks = GetParam();
  constexpr int kRounds = 50;
  std::atomic<int> entered{0};
  std::atomic<int> early{0};
  runThreadWorld(
      nranks,
      [&](chorusComm_t comm, int) {
        for (int round = 1; round <= kRounds; ++round) {
          entered.fetch_add(1);
          ASSERT_EQ(chorusBarrier(comm, nullptr), chorusSuccess) << chorusGetLastError(comm);
          if (entered.load() < round * nranks) early.fetch_add(1);
          // A second barrier keeps the next round's arrivals from counting before everyone has checked this one.
          ASSERT_EQ(chorusBarrier(comm, nullptr), chorusSuccess) << chorusGetLastError(comm);
        }
      },
      kCaseDeadline, suiteConfig());
  EXPECT_EQ(early.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(Worlds, BarrierTest, ::testing::Values(1, 2, 3, 5, 8),
                         [](const auto& info) { return std::to_string(info.param) + "ranks"; });

}  // namespace
}  // namespace chorus::test
