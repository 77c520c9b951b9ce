// chorusrun when ranks fail, are killed or time out, and when it is signalled: the others stopped, nothing left
// behind, every rank named.
#include <gtest/gtest.h>

#include "tests/unit/chorusrun_process.h"

namespace chorus {
namespace {

using namespace chorusrun_testing;

TEST(ChorusrunTest, AFailingRankStopsTheOthersAndTheirChildrenQuickly) {
  TempDir dir;
  const std::string d = dir.path();
  // Ranks 0 and 2 start a child each and report both pids; rank 1 waits for their reports, then fails.
  const std::string script =
      "if [ \"$CHORUS_RANK\" = 1 ]; then\n"
      "  while [ ! -e " +
      d + "/0 ] || [ ! -e " + d +
      "/2 ]; do sleep 0.01; done\n"
      "  exit 3\n"
      "fi\n"
      "sleep 30 &\n"
      "echo \"$$ $!\" > " +
      d + "/$CHORUS_RANK.tmp && mv " + d + "/$CHORUS_RANK.tmp " + d +
      "/$CHORUS_RANK\n"
      "wait\n";
  RunResult r = runChorusrun({"--timeout", "60", "-n", "3", "sh", "-c", script});
  EXPECT_NE(r.exitCode, 0);
  EXPECT_EQ(r.exitCode, 3) << r.err;
  EXPECT_LT(r.seconds, 10.0);
  EXPECT_NE(r.err.find("chorusrun: rank 1 (pid "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("exited with code 3"), std::string::npos) << r.err;

  std::vector<pid_t> pids;
  for (int rank : {0, 2}) {
    std::istringstream in(readFile(d + "/" + std::to_string(rank)));
    pid_t shell = 0;
    pid_t child = 0;
    in >> shell >> child;
    ASSERT_GT(shell, 0);
    ASSERT_GT(child, 0);
    pids.push_back(shell);
    pids.push_back(child);
  }
  for (pid_t pid : pids) EXPECT_TRUE(becomesTrue([pid] { return !alive(pid); }, 5.0)) << "pid " << pid << " lives";
  // Rank 0 leads the ranks' process group; nothing may be left in it.
  pid_t group = pids[0];
  EXPECT_TRUE(becomesTrue([group] { return liveMembersOf(group).empty(); }, 5.0));
}

TEST(ChorusrunTest, ARankKilledBySignalIsReported) {
  RunResult r = runChorusrun({"-n", "2", "sh", "-c", "if [ $CHORUS_RANK = 0 ]; then kill -9 $$; fi; exec sleep 30"});
  EXPECT_EQ(r.exitCode, 128 + SIGKILL) << r.err;
  EXPECT_LT(r.seconds, 10.0);
  EXPECT_NE(r.err.find("rank 0 (pid "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("was killed by signal 9 (Killed)"), std::string::npos) << r.err;
}

TEST(ChorusrunTest, ElasticLetsTheOthersGoOnAfterARankIsKilled) {
  TempDir dir;
  const std::string pidFile = dir.path() + "/rank0";
  // Rank 0 dies by SIGKILL; rank 1 outlives it and then exits 0: chorusrun reports the loss and exits 0.
  const std::string script = "if [ $CHORUS_RANK = 0 ]; then echo $$ > " + pidFile + ".tmp && mv " + pidFile + ".tmp " +
                             pidFile + " && kill -9 $$; fi\n"
                             "while [ ! -e " + pidFile + " ] || kill -0 $(cat " + pidFile +
                             ") 2>/dev/null; do sleep 0.01; done\n"
                             "echo went on\n";
  RunResult r = runChorusrun({"--elastic", "--timeout", "60", "-n", "2", "sh", "-c", script});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("went on"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("rank 0 (pid "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--elastic: the others go on"), std::string::npos) << r.err;
  // A non-zero exit still stops the job, and a job whose every rank was lost fails.
  r = runChorusrun({"--elastic", "-n", "2", "sh", "-c", "if [ $CHORUS_RANK = 0 ]; then exit 4; fi; exec sleep 30"});
  EXPECT_EQ(r.exitCode, 4) << r.err;
  r = runChorusrun({"--elastic", "-n", "2", "sh", "-c", "kill -9 $$"});
  EXPECT_EQ(r.exitCode, 128 + SIGKILL) << r.err;
}

TEST(ChorusrunTest, TimeoutKillsEveryRankAndNamesThem) {
  RunResult r = runChorusrun({"--timeout", "0.5", "-n", "2", "sleep", "30"});
  EXPECT_EQ(r.exitCode, 124) << r.err;
  EXPECT_GE(r.seconds, 0.45);
  EXPECT_LT(r.seconds, 5.0);
  EXPECT_NE(r.err.find("timed out after 0.5 s; ranks still running: 0 (pid "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(", 1 (pid "), std::string::npos) << r.err;
}

TEST(ChorusrunTest, SigtermIsForwardedToTheRanks) {
  ChorusrunProcess process({"-n", "2", "--tag-output", "sh", "-c", "echo ready; exec sleep 30"});
  ASSERT_TRUE(process.readUntil({"[0] ready", "[1] ready"}, 20));
  auto start = Clock::now();
  ASSERT_EQ(::kill(process.pid(), SIGTERM), 0);
  RunResult r = process.finish(20);
  EXPECT_EQ(r.exitCode, 128 + SIGTERM) << r.err;
  EXPECT_LT(secondsSince(start), 1.5) << "sleep dies of SIGTERM at once; no SIGKILL should be needed";
  EXPECT_NE(r.err.find("got SIGTERM"), std::string::npos) << r.err;
}

TEST(ChorusrunTest, RanksIgnoringSigintAreKilledAfterTheGracePeriod) {
  ChorusrunProcess process(
      {"-n", "2", "--tag-output", "sh", "-c", "trap '' INT TERM; echo ready; while :; do sleep 0.1; done"});
  ASSERT_TRUE(process.readUntil({"[0] ready", "[1] ready"}, 20));
  auto start = Clock::now();
  ASSERT_EQ(::kill(process.pid(), SIGINT), 0);
  RunResult r = process.finish(20);
  double stopSeconds = secondsSince(start);
  EXPECT_EQ(r.exitCode, 128 + SIGINT) << r.err;
  EXPECT_GE(stopSeconds, 1.5);
  EXPECT_LT(stopSeconds, 10.0);
  EXPECT_NE(r.err.find("sending SIGKILL"), std::string::npos) << r.err;
}

TEST(ChorusrunTest, ChildrenLeftBehindBySuccessfulRanksAreKilled) {
  RunResult r = runChorusrun({"-n", "1", "sh", "-c", "sleep 30 & echo $!"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_LT(r.seconds, 10.0);
  pid_t child = static_cast<pid_t>(std::atoi(r.out.c_str()));
  ASSERT_GT(child, 0) << r.out;
  EXPECT_TRUE(becomesTrue([child] { return !alive(child); }, 5.0));
}

}  // namespace
}  // namespace chorus
