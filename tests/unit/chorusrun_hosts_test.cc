// chorusrun --hosts and --bind-to: ranks split into emulated hosts, each with its host identity and its share of
// the cores.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/unit/chorusrun_process.h"

namespace chorus {
namespace {

using namespace chorusrun_testing;

// "rank local-rank host-id" per rank, sorted by rank (ranks < 10).
std::vector<std::string> hostLines(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
  std::vector<std::string> all = args;
  all.insert(all.end(), {"sh", "-c", "echo \"$CHORUS_RANK $CHORUS_LOCAL_RANK ${CHORUS_HOST_ID-unset}\""});
  ChorusrunProcess process(all, env);
  RunResult r = process.finish(30);
  EXPECT_EQ(r.exitCode, 0) << r.err;
  return sortedLines(r.out);
}

TEST(ChorusrunTest, HostsSplitsTheRanksIntoContiguousEmulatedHosts) {
  // 5 ranks on 2 hosts: 3 + 2; the user's CHORUS_HOST_ID is the base of the emulated ids.
  EXPECT_EQ(hostLines({"-n", "5", "--hosts", "2"}, {"CHORUS_HOST_ID=rack1"}),
            (std::vector<std::string>{"0 0 rack1#h0", "1 1 rack1#h0", "2 2 rack1#h0", "3 0 rack1#h1",
                                      "4 1 rack1#h1"}));
  EXPECT_EQ(hostLines({"-n", "4", "--hosts=4"}, {"CHORUS_HOST_ID=x"}),
            (std::vector<std::string>{"0 0 x#h0", "1 0 x#h1", "2 0 x#h2", "3 0 x#h3"}));
  // Without an id of the user's, the base is this host's identity (hostname/boot-id).
  std::vector<std::string> lines = hostLines({"-n", "3", "--hosts", "2"});
  ASSERT_EQ(lines.size(), 3u);
  std::regex pattern("([0-9]) ([0-9]) ([^ ]+/[^ ]+)#h([01])");
  std::set<std::string> bases;
  for (int rank = 0; rank < 3; ++rank) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(lines[rank], m, pattern)) << lines[rank];
    EXPECT_EQ(m[1], std::to_string(rank));
    EXPECT_EQ(m[2], std::to_string(rank == 2 ? 0 : rank));
    EXPECT_EQ(m[4], rank < 2 ? "0" : "1");
    bases.insert(m[3]);
  }
  EXPECT_EQ(bases.size(), 1u);
}

// The CPUs this test (and so the chorusrun it starts) may run on; empty if sched_getaffinity fails.
std::vector<int> cpusThisTestMayUse() {
  cpu_set_t mine;
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(mine), &mine) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &mine)) cpus.push_back(c);
  }
  return cpus;
}

// --bind-to core: each rank on one CPU of those chorusrun may use, an emulated host's ranks on its share of them.
TEST(ChorusrunTest, BindToCorePutsEachEmulatedHostOnItsShareOfTheCores) {
  const std::vector<int> cpus = cpusThisTestMayUse();
  ASSERT_FALSE(cpus.empty());
  const int n = static_cast<int>(cpus.size());
  const int perHost = std::max(1, n / 2);
  ChorusrunProcess process({"-n", "4", "--hosts", "2", "--bind-to", "core", "sh", "-c",
                            "echo \"$CHORUS_RANK $(grep Cpus_allowed_list /proc/self/status | cut -f2)\""});
  RunResult r = process.finish(30);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::vector<std::string> expected;
  for (int rank = 0; rank < 4; ++rank) {
    const int host = rank / 2, local = rank % 2;
    expected.push_back(std::to_string(rank) + " " +
                       std::to_string(cpus[static_cast<size_t>((host * perHost + local % perHost) % n)]));
  }
  EXPECT_EQ(sortedLines(r.out), expected);
  RunResult wrong = runChorusrun({"-n", "2", "--bind-to", "socket", "true"});
  EXPECT_EQ(wrong.exitCode, 2);
  EXPECT_NE(wrong.err.find("--bind-to takes auto, core or none, got 'socket'"), std::string::npos) << wrong.err;
}

// The default (--bind-to auto) binds as core only when each of 2 or more ranks gets a core of its own; otherwise,
// and with --bind-to none, a rank may run wherever chorusrun (started by this test) may.
TEST(ChorusrunTest, BindToAutoGivesRanksTheirOwnCoresOrLeavesThemFree) {
  const std::vector<int> cpus = cpusThisTestMayUse();
  ASSERT_FALSE(cpus.empty());
  std::ifstream status("/proc/self/status");
  std::string line, allowed;
  while (std::getline(status, line)) {
    if (line.rfind("Cpus_allowed_list:", 0) == 0) allowed = line.substr(line.find_first_not_of(" \t", 18));
  }
  const std::string where = "echo \"$CHORUS_RANK $(grep Cpus_allowed_list /proc/self/status | cut -f2)\"";
  auto placement = [&](std::vector<std::string> args) {
    args.insert(args.end(), {"sh", "-c", where});
    ChorusrunProcess process(args);
    RunResult r = process.finish(30);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    return sortedLines(r.out);
  };
  auto free = [&](int ranks) {
    std::vector<std::string> lines;
    for (int rank = 0; rank < ranks; ++rank) lines.push_back(std::to_string(rank) + " " + allowed);
    std::sort(lines.begin(), lines.end());  // as sortedLines orders them
    return lines;
  };
  EXPECT_EQ(placement({"-n", "1"}), free(1));
  EXPECT_EQ(placement({"-n", "2", "--bind-to", "none"}), free(2));
  if (cpus.size() <= 16) {  // more ranks than cores: left free
    const int more = static_cast<int>(cpus.size()) + 1;
    EXPECT_EQ(placement({"-n", std::to_string(more)}), free(more));
  }
  if (cpus.size() >= 2) {
    EXPECT_EQ(placement({"-n", "2"}), (std::vector<std::string>{"0 " + std::to_string(cpus[0]),
                                                                 "1 " + std::to_string(cpus[1])}));
  }
}

TEST(ChorusrunTest, WithoutHostsTheHostIdIsLeftAlone) {
  EXPECT_EQ(hostLines({"-n", "2"}, {"CHORUS_HOST_ID=mine"}), (std::vector<std::string>{"0 0 mine", "1 1 mine"}));
  std::vector<std::string> lines = hostLines({"-n", "2"});
  ASSERT_EQ(lines.size(), 2u);
  if (!std::getenv("CHORUS_HOST_ID")) {
    EXPECT_EQ(lines[0], "0 0 unset");
  }
}

// The rank side of RanksOfEmulatedHostsSeeTheirHostIdentity: skipped unless chorusrun started this process.
TEST(ChorusrunRankSide, HostIdentityIsTheEmulatedHost) {
  if (params::storeServed() != "1" || !params::isSet("CHORUS_HOST_ID")) GTEST_SKIP() << "runs only under chorusrun";
  int rank = static_cast<int>(params::asInt("CHORUS_RANK", params::rank(), 0, 1 << 20));
  EXPECT_EQ(hostIdentity(), "base#h" + std::to_string(rank < 2 ? 0 : 1));
}

TEST(ChorusrunTest, RanksOfEmulatedHostsSeeTheirHostIdentity) {
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  ASSERT_GT(n, 0);
  self[n] = '\0';
  ChorusrunProcess process({"-n", "3", "--hosts", "2", "--tag-output", self,
                            "--gtest_filter=ChorusrunRankSide.HostIdentityIsTheEmulatedHost"},
                           {"CHORUS_HOST_ID=base"});
  RunResult r = process.finish(60);
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  for (int rank = 0; rank < 3; ++rank) {
    EXPECT_NE(r.out.find(passedLineOf(rank)), std::string::npos) << r.out;
  }
}

}  // namespace
}  // namespace chorus
