// Collectives across processes (fork + exec of chorus_collective_worker), and the process-world harness itself.
#include "tests/harness/build_tree.h"
#include "tests/harness/process_world.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <string>
#include <tuple>

namespace chorus::test {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

ProcessWorldOptions workerWorld(int nranks, const std::string& scenario, std::chrono::seconds deadline) {
  ProcessWorldOptions o;
  o.nranks = nranks;
  o.worker = buildTreePath("tests/chorus_collective_worker");
  o.args = {scenario};
  o.env = {{"CHORUS_CHUNK_SIZE", "4096"}, {"CHORUS_TIMEOUT", "30"}};
  o.deadline = deadline;
  return o;
}

class ProcessWorldTest : public ::testing::TestWithParam<std::tuple<int, std::string>> {};

TEST_P(ProcessWorldTest, Scenario) {
  const auto& [nranks, scenario] = GetParam();
  ProcessWorldResult result = runProcessWorld(workerWorld(nranks, scenario, 120s));
  EXPECT_TRUE(result.allSucceeded()) << result.describe();
  ASSERT_EQ(result.ranks.size(), static_cast<size_t>(nranks));
  for (int r = 0; r < nranks; ++r) {
    EXPECT_NE(result.ranks[r].output.find("calls right"), std::string::npos)
        << "rank " << r << ": " << result.ranks[r].output;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Worlds, ProcessWorldTest,
    ::testing::Combine(::testing::Values(2, 3, 4),
                       ::testing::Values("allreduce_sum", "broadcast", "reduce", "allgather", "reducescatter")),
    [](const auto& info) { return std::to_string(std::get<0>(info.param)) + "ranks_" + std::get<1>(info.param); });

TEST(ProcessWorldHarnessTest, RankZeroCanServeTheStore) {
  ProcessWorldOptions o = workerWorld(3, "allgather", 120s);
  o.parentServesStore = false;
  ProcessWorldResult result = runProcessWorld(o);
  EXPECT_TRUE(result.allSucceeded()) << result.describe();
}

TEST(ProcessWorldHarnessTest, FirstFailureKillsTheOthersPromptly) {
  const Clock::time_point start = Clock::now();
  ProcessWorldResult result = runProcessWorld(workerWorld(4, "rank1_exits_early", 120s));
  EXPECT_LT(secondsSince(start), 20.0) << "the ranks left waiting for rank 1 should have been killed at once";
  EXPECT_FALSE(result.allSucceeded());
  EXPECT_FALSE(result.timedOut);
  EXPECT_NE(result.firstFailure.find("rank 1 failed first: exit 3"), std::string::npos) << result.describe();
  ASSERT_EQ(result.ranks.size(), 4u);
  EXPECT_TRUE(result.ranks[1].exited);
  EXPECT_EQ(result.ranks[1].exitCode, 3);
  EXPECT_NE(result.ranks[1].output.find("on purpose"), std::string::npos) << result.describe();
  for (int r : {0, 2, 3}) {
    EXPECT_TRUE(result.ranks[r].killedByHarness) << result.describe();
    EXPECT_EQ(result.ranks[r].signal, SIGKILL) << result.describe();
  }
  EXPECT_NE(result.describe().find("--- rank 3"), std::string::npos);
}

TEST(ProcessWorldHarnessTest, DeadlineKillsAHungWorld) {
  const Clock::time_point start = Clock::now();
  ProcessWorldResult result = runProcessWorld(workerWorld(3, "rank0_hangs", 3s));
  EXPECT_LT(secondsSince(start), 15.0);
  EXPECT_TRUE(result.timedOut) << result.describe();
  EXPECT_FALSE(result.allSucceeded());
  ASSERT_EQ(result.ranks.size(), 3u);
  for (const RankOutcome& r : result.ranks) {
    EXPECT_TRUE(r.killedByHarness) << result.describe();
    EXPECT_EQ(r.signal, SIGKILL) << result.describe();
    // The group is gone: no rank survives its reaping.
    EXPECT_NE(::kill(r.pid, 0), 0) << "pid " << r.pid << " still exists";
  }
}

// Rank 1 dies without a goodbye (as a crash would) while the others wait in an allreduce with CHORUS_TIMEOUT=60.
ProcessWorldResult crashRankOne(int nranks) {
  ProcessWorldOptions o = workerWorld(nranks, "rank1_dies_mid_call", 60s);
  o.env = {{"CHORUS_TIMEOUT", "60"}};
  o.killOnFirstFailure = false;
  const Clock::time_point start = Clock::now();
  ProcessWorldResult result = runProcessWorld(o);
  EXPECT_LT(secondsSince(start), 15.0) << nranks << " ranks: " << result.describe();
  EXPECT_FALSE(result.timedOut) << result.describe();
  EXPECT_EQ(result.ranks.size(), static_cast<size_t>(nranks));
  return result;
}

class PeerLossTest : public ::testing::TestWithParam<int> {};

// Every other rank's pending call fails within seconds, not after CHORUS_TIMEOUT.
TEST_P(PeerLossTest, EveryRankLearnsOfACrashedPeer) {
  ProcessWorldResult result = crashRankOne(GetParam());
  for (size_t r = 0; r < result.ranks.size(); ++r) {
    EXPECT_EQ(result.ranks[r].exitCode, r == 1 ? 5 : 7) << "rank " << r << ": " << result.describe();
  }
}

// Survivors that fail on their own abandon their connections with a note, so each survivor's error names the
// crashed rank 1: either as the connection it lost or as the rank that vanished without a goodbye.
TEST_P(PeerLossTest, EverySurvivorNamesTheCrashedRank) {
  ProcessWorldResult result = crashRankOne(GetParam());
  for (size_t r = 0; r < result.ranks.size(); ++r) {
    if (r == 1) continue;
    const std::string& out = result.ranks[r].output;
    EXPECT_NE(out.find("returned remote error"), std::string::npos) << "rank " << r << ": " << result.describe();
    bool named = out.find("peer 1: lost connection") != std::string::npos ||
                 out.find("vanished without a goodbye: rank(s) 1") != std::string::npos;
    EXPECT_TRUE(named) << "rank " << r << ": " << result.describe();
  }
}

INSTANTIATE_TEST_SUITE_P(Worlds, PeerLossTest, ::testing::Values(2, 4),
                         [](const auto& info) { return std::to_string(info.param) + "ranks"; });

TEST(ProcessWorldHarnessTest, MissingWorkerIsReported) {
  ProcessWorldOptions o = workerWorld(2, "allgather", 30s);
  o.worker = "/nonexistent/chorus_worker";
  ProcessWorldResult result = runProcessWorld(o);
  EXPECT_FALSE(result.allSucceeded());
  EXPECT_NE(result.describe().find("execve of the worker failed"), std::string::npos) << result.describe();
}

}  // namespace
}  // namespace chorus::test
