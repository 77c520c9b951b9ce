// CHORUS_ALGO names broadcast's and reduce's pipelined chain "chain"; "ring", NCCL's name for it, still forces it
// there. Either way the chain runs, gets every case right, and reports itself as "chain" (traces, chorus-perf).
#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <string>
#include <vector>

#include "src/api/comm_handle.h"
#include "tests/collectives/case_matrix.h"
#include "tests/collectives/case_runner.h"
#include "tests/collectives/suite_knobs.h"

namespace chorus::test {
namespace {

constexpr int kRanks = 3;
constexpr int kRoot = 1;

class ChainNamesTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ChainNamesTest, BroadcastAndReduceRunTheChain) {
  Config config = suiteConfig();
  config.algo = GetParam();
  ThreadWorld world(kRanks, kCaseDeadline, config);
  ASSERT_TRUE(world.ready());
  for (CollectiveKind kind : {CollectiveKind::kBroadcast, CollectiveKind::kReduce}) {
    CaseGrid grid;
    grid.kind = kind;
    grid.roots = rootsFor(kRanks);
    runCases(world, casesOf(grid), kCaseDeadline);
  }
  world.run(
      [](chorusComm_t comm, int r) {
        std::vector<int32_t> x(5000, r + 1);  // a few 4 KiB slices
        ASSERT_EQ(chorusBroadcast(x.data(), x.data(), x.size(), chorusInt32, kRoot, comm, nullptr), chorusSuccess);
        EXPECT_EQ(x.back(), kRoot + 1);
        EXPECT_STREQ(comm->impl->lastAlgorithm(), "chain") << "rank " << r << ", broadcast";
        ASSERT_EQ(chorusReduce(x.data(), x.data(), x.size(), chorusInt32, chorusSum, kRoot, comm, nullptr),
                  chorusSuccess);
        if (r == kRoot) {
          EXPECT_EQ(x.back(), kRanks * (kRoot + 1));
        }
        EXPECT_STREQ(comm->impl->lastAlgorithm(), "chain") << "rank " << r << ", reduce";
      },
      kCaseDeadline);
}

INSTANTIATE_TEST_SUITE_P(Names, ChainNamesTest, ::testing::Values("chain", "ring", "broadcast:ring;reduce:ring"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& ch : name) ch = std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
                           return name;
                         });

}  // namespace
}  // namespace chorus::test
