// The thread-world harness itself: it builds worlds, and it turns a hang into a prompt test failure.
#include "tests/harness/thread_world.h"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>

#include "tests/collectives/suite_knobs.h"

namespace chorus::test {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

double threadWorldSecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

TEST(ThreadWorldTest, EveryRankSeesItsRankAndTheSize) {
  for (int n : {1, 2, 5}) {
    std::array<std::atomic<int>, 8> seen{};
    runThreadWorld(
        n,
        [&](chorusComm_t comm, int rank) {
          int r = -1, count = -1;
          EXPECT_EQ(chorusCommUserRank(comm, &r), chorusSuccess);
          EXPECT_EQ(chorusCommCount(comm, &count), chorusSuccess);
          EXPECT_EQ(r, rank);
          EXPECT_EQ(count, n);
          seen[rank]++;
        },
        30s, suiteConfig());
    for (int r = 0; r < n; ++r) EXPECT_EQ(seen[r].load(), 1) << "rank " << r << " of " << n;
  }
}

// Rank 0 skips the allreduce its peers wait in: the world must be aborted, the blocked calls must return an
// error, and run() must report it, all well before any library timeout.
void expectHangAborted(std::chrono::seconds deadline, std::chrono::seconds grace, const char* message) {
  Config config = suiteConfig();
  config.timeoutSeconds = 120;
  ThreadWorld world(3, 30s, config);
  ASSERT_TRUE(world.ready());
  world.setStragglerGrace(grace);
  std::array<std::atomic<int>, 3> results{};
  for (auto& r : results) r = -1;
  bool completed = true;
  const Clock::time_point start = Clock::now();
  RankBody rankZeroSkips = [&](chorusComm_t comm, int rank) {
    if (rank == 0) return;
    float x = 1;
    results[rank] = chorusAllReduce(&x, &x, 1, chorusFloat32, chorusSum, comm, nullptr);
  };
  EXPECT_NONFATAL_FAILURE(completed = world.run(rankZeroSkips, deadline), message);
  EXPECT_FALSE(completed);
  EXPECT_FALSE(world.ready());
  EXPECT_LT(threadWorldSecondsSince(start), std::min(deadline, grace).count() + 10.0);
  EXPECT_EQ(results[1].load(), chorusRemoteError);
  EXPECT_EQ(results[2].load(), chorusRemoteError);
}

TEST(ThreadWorldTest, DeadlineAbortsAHungWorld) {
  expectHangAborted(2s, 100s, "deadline of 2 s passed with ranks 1 2");
}

TEST(ThreadWorldTest, StragglersAreAbortedSoonAfterTheFirstRankLeaves) {
  expectHangAborted(100s, 1s, "ranks 1 2 were still running 1 s after another rank's body returned");
}

TEST(ThreadWorldTest, InitFailureIsReportedPerRank) {
  // An unknown algorithm makes every rank's communicator refuse to start.
  Config config = suiteConfig();
  config.algo = "no_such_algorithm";
  EXPECT_NONFATAL_FAILURE(
      {
        ThreadWorld world(2, 30s, config);
        EXPECT_FALSE(world.ready());
      },
      "rank 1: invalid argument: chorusCommInitRankConfig: config->algo = \"no_such_algorithm\" does not parse");
}

}  // namespace
}  // namespace chorus::test
