// Collectives over the shared-memory transport (CHORUS_TRANSPORT=shm): thread worlds and process worlds of 2, 3,
// 4 and 8 ranks, both large-message paths, a crashed peer, and a SIGKILLed job that must leave /dev/shm clean.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "tests/collectives/case_matrix.h"
#include "tests/collectives/case_runner.h"
#include "tests/collectives/suite_knobs.h"
#include "tests/harness/build_tree.h"
#include "tests/harness/process_world.h"

namespace chorus::test {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

const std::vector<CollectiveKind> kKinds = {CollectiveKind::kAllReduce, CollectiveKind::kBroadcast,
                                            CollectiveKind::kAllGather};

// Every kind over the grid's other dimensions, roots first and last.
std::vector<CollectiveCase> casesFor(const CaseGrid& base, int nranks) {
  std::vector<CollectiveCase> cases;
  uint32_t salt = 1;
  for (CollectiveKind kind : kKinds) {
    CaseGrid grid = base;
    grid.kind = kind;
    grid.roots = {0, nranks - 1};
    std::vector<CollectiveCase> some = casesOf(grid, salt);
    salt += static_cast<uint32_t>(some.size());
    cases.insert(cases.end(), some.begin(), some.end());
  }
  return cases;
}

class ShmThreadWorldTest : public ::testing::TestWithParam<int> {};

TEST_P(ShmThreadWorldTest, AllreduceBroadcastAllgather) {
  const int nranks = GetParam();
  Config config = suiteConfig();
  config.transports = "shm";
  CaseGrid grid;
  grid.types = {chorusFloat32, chorusInt64};
  grid.ops = {chorusSum, chorusMax};
  runCasesOnNewWorld(nranks, casesFor(grid, nranks), kCaseDeadline, config);
}

// Slices of 1 MiB: large enough for process_vm_readv (2: always) and for pieces pipelined through a 64 KiB ring
// (0: never).
TEST_P(ShmThreadWorldTest, LargeMessagesByEitherPath) {
  const int nranks = GetParam();
  for (int cma : {2, 0}) {
    SCOPED_TRACE("shmCma " + std::to_string(cma));
    Config config = suiteConfig();
    config.transports = "shm";
    config.chunkSize = 1 << 20;
    config.shmBufferBytes = 65536;
    config.shmCma = cma;
    CaseGrid grid;
    grid.types = {chorusFloat32};
    grid.ops = {chorusSum};
    grid.counts = {300001};
    grid.inPlace = {false};
    runCasesOnNewWorld(nranks, casesFor(grid, nranks), kCaseDeadline, config);
  }
}

INSTANTIATE_TEST_SUITE_P(Worlds, ShmThreadWorldTest, ::testing::Values(2, 3, 4, 8),
                         [](const auto& info) { return std::to_string(info.param) + "ranks"; });

ProcessWorldOptions shmWorld(int nranks, const std::string& scenario, const std::string& transport) {
  ProcessWorldOptions o;
  o.nranks = nranks;
  o.worker = buildTreePath("tests/chorus_collective_worker");
  o.args = {scenario};
  o.env = {{"CHORUS_CHUNK_SIZE", "4096"},
           {"CHORUS_TIMEOUT", "30"},
           {"CHORUS_TRANSPORT", transport},
           {"CHORUS_DEBUG", "INFO"}};
  o.deadline = 120s;
  return o;
}

class ShmProcessWorldTest : public ::testing::TestWithParam<std::tuple<int, std::string>> {};

TEST_P(ShmProcessWorldTest, ScenarioRunsViaShm) {
  const auto& [nranks, scenario] = GetParam();
  ProcessWorldResult result = runProcessWorld(shmWorld(nranks, scenario, "shm"));
  EXPECT_TRUE(result.allSucceeded()) << result.describe();
  ASSERT_EQ(result.ranks.size(), static_cast<size_t>(nranks));
  for (int r = 0; r < nranks; ++r) {
    const std::string& out = result.ranks[r].output;
    EXPECT_NE(out.find("calls right"), std::string::npos) << "rank " << r << ": " << out;
    EXPECT_NE(out.find("via shm ring"), std::string::npos) << "rank " << r << ": " << out;
    EXPECT_EQ(out.find("via tcp"), std::string::npos) << "rank " << r << ": " << out;
  }
}

INSTANTIATE_TEST_SUITE_P(Worlds, ShmProcessWorldTest,
                         ::testing::Combine(::testing::Values(2, 3, 4, 8),
                                            ::testing::Values("allreduce_sum", "broadcast", "allgather")),
                         [](const auto& info) {
                           return std::to_string(std::get<0>(info.param)) + "ranks_" + std::get<1>(info.param);
                         });

TEST(ShmProcessWorldTest, TcpRestrictionStillForcesTcp) {
  ProcessWorldResult result = runProcessWorld(shmWorld(2, "broadcast", "tcp"));
  EXPECT_TRUE(result.allSucceeded()) << result.describe();
  for (const RankOutcome& r : result.ranks) {
    EXPECT_NE(r.output.find("via tcp"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("via shm"), std::string::npos) << r.output;
  }
}

// Entries of /dev/shm whose names say one of these processes made them ("chorus-<pid>-...").
std::vector<std::string> devShmEntriesOf(const std::vector<RankOutcome>& ranks) {
  std::vector<std::string> found;
  DIR* d = ::opendir("/dev/shm");
  if (!d) return found;
  while (dirent* e = ::readdir(d)) {
    for (const RankOutcome& r : ranks) {
      const std::string prefix = "chorus-" + std::to_string(r.pid) + "-";
      if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0) found.push_back(e->d_name);
    }
  }
  ::closedir(d);
  return found;
}

// Rank 0 blocks forever after init while the others wait on it in an allreduce; at the deadline the harness
// SIGKILLs the whole job. No segment survives it.
TEST(ShmProcessWorldTest, SigkilledJobLeavesNothingInDevShm) {
  ProcessWorldOptions o = shmWorld(4, "rank0_hangs", "shm");
  o.deadline = 3s;
  ProcessWorldResult result = runProcessWorld(o);
  EXPECT_TRUE(result.timedOut) << result.describe();
  ASSERT_EQ(result.ranks.size(), 4u);
  for (const RankOutcome& r : result.ranks) {
    EXPECT_EQ(r.signal, SIGKILL) << result.describe();
    EXPECT_NE(r.output.find("via shm ring"), std::string::npos) << "killed before connecting: " << r.output;
  }
  std::vector<std::string> left = devShmEntriesOf(result.ranks);
  EXPECT_TRUE(left.empty()) << "left in /dev/shm: " << left.front();
}

class ShmPeerLossTest : public ::testing::TestWithParam<int> {};

// Rank 1 dies without a goodbye: every survivor's call fails within seconds and names rank 1.
TEST_P(ShmPeerLossTest, EverySurvivorNamesTheCrashedRank) {
  const int nranks = GetParam();
  ProcessWorldOptions o = shmWorld(nranks, "rank1_dies_mid_call", "shm");
  for (auto& [name, value] : o.env) {
    if (name == "CHORUS_TIMEOUT") value = "60";
  }
  o.killOnFirstFailure = false;
  o.deadline = 60s;
  const Clock::time_point start = Clock::now();
  ProcessWorldResult result = runProcessWorld(o);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 15.0) << result.describe();
  ASSERT_EQ(result.ranks.size(), static_cast<size_t>(nranks));
  for (int r = 0; r < nranks; ++r) {
    EXPECT_EQ(result.ranks[r].exitCode, r == 1 ? 5 : 7) << "rank " << r << ": " << result.describe();
    if (r == 1) continue;
    const std::string& out = result.ranks[r].output;
    bool named = out.find("peer 1: lost connection") != std::string::npos ||
                 out.find("vanished without a goodbye: rank(s) 1") != std::string::npos;
    EXPECT_TRUE(named) << "rank " << r << ": " << result.describe();
  }
  EXPECT_TRUE(devShmEntriesOf(result.ranks).empty());
}

INSTANTIATE_TEST_SUITE_P(Worlds, ShmPeerLossTest, ::testing::Values(2, 4),
                         [](const auto& info) { return std::to_string(info.param) + "ranks"; });

}  // namespace
}  // namespace chorus::test
