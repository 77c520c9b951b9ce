// Runs the built chorusrun binary on small shell programs (and on this test binary as a rank): each rank runs
// once with its environment, meets the store chorusrun serves, gets the job's secret; command-line errors.
#include <gtest/gtest.h>

#include "tests/unit/chorusrun_process.h"

namespace chorus {
namespace {

using namespace chorusrun_testing;

TEST(ChorusrunTest, EveryRankRunsOnceWithItsRank) {
  RunResult r = runChorusrun({"-n", "3", "sh", "-c", "echo $CHORUS_RANK"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(sortedLines(r.out), (std::vector<std::string>{"0", "1", "2"}));
}

TEST(ChorusrunTest, SetsTheRankEnvironmentAndOverridesInheritedValues) {
  ChorusrunProcess process(
      {"-n", "2", "--", "sh", "-c",
       "echo \"$CHORUS_RANK $CHORUS_WORLD_SIZE $CHORUS_LOCAL_RANK $CHORUS_STORE $CHORUS_STORE_SERVED $CHORUS_JOB_ID\""},
      {"CHORUS_RANK=99", "CHORUS_JOB_ID=stale"});
  RunResult r = process.finish(30);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::vector<std::string> lines = sortedLines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  std::regex pattern("([0-9]+) 2 ([0-9]+) 127\\.0\\.0\\.1:[0-9]+ 1 ([0-9a-f]{16})");
  std::set<std::string> jobIds;
  for (int rank = 0; rank < 2; ++rank) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(lines[rank], m, pattern)) << lines[rank];
    EXPECT_EQ(m[1], std::to_string(rank));
    EXPECT_EQ(m[2], std::to_string(rank));
    jobIds.insert(m[3]);
  }
  EXPECT_EQ(jobIds.size(), 1u) << "both ranks must share one job id";
}

// The rank side of RanksMeetAtTheStoreChorusrunServes: skipped unless chorusrun started this process.
TEST(ChorusrunRankSide, JoinTheStore) {
  if (params::storeServed() != "1" || !params::isSet("CHORUS_RANK")) GTEST_SKIP() << "runs only under chorusrun";
  int rank = static_cast<int>(params::asInt("CHORUS_RANK", params::rank(), 0, 1 << 20));
  int size = static_cast<int>(params::asInt("CHORUS_WORLD_SIZE", params::worldSize(), 1, 1 << 20));
  std::string store = params::store();
  size_t colon = store.rfind(':');
  ASSERT_NE(colon, std::string::npos) << store;
  uint16_t port = static_cast<uint16_t>(std::stoi(store.substr(colon + 1)));
  StoreClient client(store.substr(0, colon), port, params::jobId(), rank, Deadline::after(30));
  client.set("rank/" + std::to_string(rank), Bytes{static_cast<uint8_t>(rank)}, Deadline::after(30));
  client.barrier("joined", size, Deadline::after(30));
  for (int peer = 0; peer < size; ++peer) {
    EXPECT_EQ(client.get("rank/" + std::to_string(peer), Deadline::after(30)), Bytes{static_cast<uint8_t>(peer)});
  }
  EXPECT_EQ(client.add("finished", 1, Deadline::after(30)) <= size, true);
}

TEST(ChorusrunTest, RanksMeetAtTheStoreChorusrunServes) {
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  ASSERT_GT(n, 0);
  self[n] = '\0';
  RunResult r = runChorusrun({"-n", "3", "--tag-output", self, "--gtest_filter=ChorusrunRankSide.JoinTheStore"}, 60);
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  for (int rank = 0; rank < 3; ++rank) {
    EXPECT_NE(r.out.find(passedLineOf(rank)), std::string::npos) << r.out;
  }
}

TEST(ChorusrunTest, TagOutputPrefixesEveryLineOfBothStreams) {
  RunResult r = runChorusrun({"-n", "2", "--tag-output", "sh", "-c", "echo a; echo b >&2; echo c; printf tail"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(sortedLines(r.out), (std::vector<std::string>{"[0] a", "[0] c", "[0] tail", "[1] a", "[1] c", "[1] tail"}));
  // chorusrun's own line first (the store's address, for chorus-inspect), then the ranks' tagged lines.
  ASSERT_EQ(r.err.rfind("chorusrun: store 127.0.0.1:", 0), 0u) << r.err;
  EXPECT_EQ(sortedLines(r.err.substr(r.err.find('\n') + 1)), (std::vector<std::string>{"[0] b", "[1] b"}));
}

// CHORUS_SECRET of every rank, sorted.
std::vector<std::string> secrets(const std::vector<std::string>& env = {}) {
  ChorusrunProcess process({"-n", "3", "sh", "-c", "echo \"${CHORUS_SECRET-unset}\""}, env);
  RunResult r = process.finish(30);
  EXPECT_EQ(r.exitCode, 0) << r.err;
  return sortedLines(r.out);
}

TEST(ChorusrunTest, EveryRankGetsTheSameFreshSecret) {
  std::vector<std::string> first = secrets();
  ASSERT_EQ(first.size(), 3u);
  EXPECT_TRUE(std::regex_match(first[0], std::regex("[0-9a-f]{64}"))) << first[0];
  EXPECT_EQ(first[0], first[1]);
  EXPECT_EQ(first[0], first[2]);
  std::vector<std::string> second = secrets();
  ASSERT_EQ(second.size(), 3u);
  EXPECT_NE(second[0], first[0]) << "each job gets its own secret";
}

TEST(ChorusrunTest, TheUsersSecretIsKept) {
  EXPECT_EQ(secrets({"CHORUS_SECRET=correct horse battery staple"}),
            (std::vector<std::string>(3, "correct horse battery staple")));
}

TEST(ChorusrunTest, HostsCommandLineErrors) {
  RunResult tooMany = runChorusrun({"-n", "2", "--hosts", "3", "true"});
  EXPECT_EQ(tooMany.exitCode, 2);
  EXPECT_NE(tooMany.err.find("--hosts 3 needs at least as many ranks, got -n 2"), std::string::npos) << tooMany.err;
  RunResult zero = runChorusrun({"-n", "2", "--hosts", "0", "true"});
  EXPECT_EQ(zero.exitCode, 2);
  EXPECT_NE(zero.err.find("--hosts needs a number of hosts"), std::string::npos) << zero.err;
  RunResult missing = runChorusrun({"-n", "2", "--hosts"});
  EXPECT_EQ(missing.exitCode, 2);
  RunResult help = runChorusrun({"--help"});
  EXPECT_NE(help.out.find("--hosts H"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("CHORUS_SECRET"), std::string::npos) << help.out;
}

TEST(ChorusrunTest, CommandLineErrors) {
  RunResult help = runChorusrun({"--help"});
  EXPECT_EQ(help.exitCode, 0);
  EXPECT_NE(help.out.find("usage: chorusrun -n N"), std::string::npos) << help.out;

  RunResult noRanks = runChorusrun({"true"});
  EXPECT_EQ(noRanks.exitCode, 2);
  EXPECT_NE(noRanks.err.find("-n N is required"), std::string::npos) << noRanks.err;

  RunResult badRanks = runChorusrun({"-n", "zero", "true"});
  EXPECT_EQ(badRanks.exitCode, 2);

  RunResult unknown = runChorusrun({"-n", "1", "--frobnicate", "true"});
  EXPECT_EQ(unknown.exitCode, 2);
  EXPECT_NE(unknown.err.find("unknown option '--frobnicate'"), std::string::npos) << unknown.err;

  RunResult missing = runChorusrun({"-n", "2", "/nonexistent/program"});
  EXPECT_EQ(missing.exitCode, 127);
  EXPECT_NE(missing.err.find("/nonexistent/program"), std::string::npos) << missing.err;

  RunResult dashDash = runChorusrun({"-n1", "--", "sh", "-c", "echo $1", "sh", "--tag-output"});
  EXPECT_EQ(dashDash.exitCode, 0) << dashDash.err;
  EXPECT_EQ(dashDash.out, "--tag-output\n");
}

}  // namespace
}  // namespace chorus
