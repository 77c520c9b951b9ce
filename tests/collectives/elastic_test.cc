// Elastic jobs across processes: ranks killed mid-run (SIGKILL, no goodbye), the survivors shrink and go on with
// correct results, at 3-6 ranks on 1-3 emulated hosts, a shrink of a shrink, two ranks lost at once, rank 0 lost,
// the victims listed explicitly; and a healthy communicator shrunk by an explicit exclusion list.
#include <gtest/gtest.h>

#include <csignal>
#include <string>
#include <tuple>

#include "tests/harness/build_tree.h"
#include "tests/harness/process_world.h"

namespace chorus::test {
namespace {

using namespace std::chrono_literals;

bool contains(const std::string& list, int rank) {
  for (size_t at = 0; at < list.size();) {
    const size_t end = list.find_first_of(",;", at);
    if (std::stoi(list.substr(at, end - at)) == rank) return true;
    at = end == std::string::npos ? list.size() : end + 1;
  }
  return false;
}

// (ranks, hosts for CHORUS_TEST_HOSTS, victims per round for CHORUS_TEST_VICTIMS, victims listed explicitly)
class ShrinkAfterKillTest : public ::testing::TestWithParam<std::tuple<int, std::string, std::string, bool>> {};

TEST_P(ShrinkAfterKillTest, SurvivorsShrinkAndGoOnWithRightResults) {
  const auto& [nranks, hosts, victims, listed] = GetParam();
  ProcessWorldOptions o;
  o.nranks = nranks;
  o.worker = buildTreePath("tests/chorus_elastic_worker");
  o.args = {"kill_and_shrink"};
  o.env = {{"CHORUS_TIMEOUT", "60"}, {"CHORUS_TEST_HOSTS", hosts}, {"CHORUS_TEST_VICTIMS", victims}};
  if (listed) o.env.emplace_back("CHORUS_TEST_LIST_VICTIMS", "1");
  o.killOnFirstFailure = false;  // the victims' deaths are the point
  o.deadline = 120s;
  ProcessWorldResult result = runProcessWorld(o);
  ASSERT_FALSE(result.timedOut) << result.describe();
  for (int r = 0; r < nranks; ++r) {
    const RankOutcome& rank = result.ranks[r];
    if (contains(victims, r)) {
      EXPECT_TRUE(!rank.exited && rank.signal == SIGKILL && !rank.killedByHarness) << result.describe();
    } else {
      EXPECT_TRUE(rank.succeeded()) << result.describe();
      EXPECT_NE(rank.output.find("kill_and_shrink right"), std::string::npos) << "rank " << r << ": " << rank.output;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Worlds, ShrinkAfterKillTest,
                         ::testing::Values(std::make_tuple(3, "1", "2", false),  // one host
                                           std::make_tuple(4, "2", "1",
                                                           false),  // 2 + 2 hosts, the lost rank's host keeps one
                                           std::make_tuple(5, "3", "0", false),  // rank 0 lost (the store outlives it)
                                           std::make_tuple(6, "3", "2,5", false),  // two lost at once, on two hosts
                                           std::make_tuple(6, "2", "1;4", false),  // a shrink of a shrink
                                           std::make_tuple(4, "2", "3", true)),  // the victims listed by the survivors
                         [](const auto& info) {
                           std::string victims = std::get<2>(info.param);
                           for (char& c : victims) c = c == ',' ? '_' : c == ';' ? 'x' : c;
                           return std::to_string(std::get<0>(info.param)) + "ranks_" + std::get<1>(info.param) +
                                  "hosts_lose" + victims + (std::get<3>(info.param) ? "_listed" : "");
                         });

TEST(ShrinkByListTest, AHealthyCommunicatorLeavesOutTheListedRanks) {
  ProcessWorldOptions o;
  o.nranks = 5;
  o.worker = buildTreePath("tests/chorus_elastic_worker");
  o.args = {"exclude"};
  o.env = {{"CHORUS_TIMEOUT", "60"}, {"CHORUS_TEST_HOSTS", "2"}, {"CHORUS_TEST_EXCLUDE", "1,3"}};
  o.deadline = 120s;
  ProcessWorldResult result = runProcessWorld(o);
  EXPECT_TRUE(result.allSucceeded()) << result.describe();
  for (int r : {0, 2, 4}) {
    EXPECT_NE(result.ranks[r].output.find("exclude right"), std::string::npos) << result.ranks[r].output;
  }
}

}  // namespace
}  // namespace chorus::test
