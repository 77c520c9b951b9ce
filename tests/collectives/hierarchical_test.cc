// Two-level algorithms across emulated hosts (CHORUS_HOST_ID per rank), even and uneven splits, hosts as rank
// blocks and interleaved; and the default selection in the same worlds.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "tests/harness/build_tree.h"
#include "tests/harness/process_world.h"

namespace chorus::test {
namespace {

using namespace std::chrono_literals;

// (ranks, hosts spec for CHORUS_TEST_HOSTS, CHORUS_ALGO)
class HierarchicalTest : public ::testing::TestWithParam<std::tuple<int, std::string, std::string>> {};

TEST_P(HierarchicalTest, MatchesTheReference) {
  const auto& [nranks, hosts, algo] = GetParam();
  ProcessWorldOptions o;
  o.nranks = nranks;
  o.worker = buildTreePath("tests/chorus_collective_worker");
  o.args = {"rooted_and_allreduce"};
  o.env = {{"CHORUS_CHUNK_SIZE", "4096"}, {"CHORUS_TIMEOUT", "60"}, {"CHORUS_TEST_HOSTS", hosts},
           {"CHORUS_ALGO", algo}};
  o.deadline = 180s;
  ProcessWorldResult result = runProcessWorld(o);
  EXPECT_TRUE(result.allSucceeded()) << result.describe();
  for (int r = 0; r < static_cast<int>(result.ranks.size()); ++r) {
    EXPECT_NE(result.ranks[r].output.find("calls right"), std::string::npos)
        << "rank " << r << ": " << result.ranks[r].output;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Splits, HierarchicalTest,
    ::testing::Values(std::make_tuple(4, "2", "hierarchical"),     // 2 + 2
                      std::make_tuple(5, "2", "hierarchical"),     // 3 + 2
                      std::make_tuple(7, "3", "hierarchical"),     // 3 + 2 + 2
                      std::make_tuple(3, "2", "hierarchical"),     // 2 + 1: a host with a lone rank
                      std::make_tuple(6, "3/rr", "hierarchical"),  // hosts {0,3} {1,4} {2,5}
                      std::make_tuple(5, "2/rr", ""),              // the selector's own choice
                      std::make_tuple(4, "1", "hierarchical")),    // one host: the inter-host level is empty
    [](const auto& info) {
      std::string hosts = std::get<1>(info.param);
      for (char& c : hosts) c = c == '/' ? '_' : c;
      std::string algo = std::get<2>(info.param);
      return std::to_string(std::get<0>(info.param)) + "ranks_" + hosts + "hosts_" + (algo.empty() ? "default" : algo);
    });

// The framework calls across emulated hosts: the two-level alltoall forced, and the selector's own choices.
class HierarchicalFrameworkTest : public ::testing::TestWithParam<std::tuple<int, std::string, std::string>> {};

TEST_P(HierarchicalFrameworkTest, MatchesTheReference) {
  const auto& [nranks, hosts, algo] = GetParam();
  ProcessWorldOptions o;
  o.nranks = nranks;
  o.worker = buildTreePath("tests/chorus_collective_worker");
  o.args = {"framework_calls"};
  o.env = {{"CHORUS_CHUNK_SIZE", "4096"}, {"CHORUS_TIMEOUT", "60"}, {"CHORUS_TEST_HOSTS", hosts},
           {"CHORUS_ALGO", algo}};
  o.deadline = 180s;
  ProcessWorldResult result = runProcessWorld(o);
  EXPECT_TRUE(result.allSucceeded()) << result.describe();
}

INSTANTIATE_TEST_SUITE_P(
    Splits, HierarchicalFrameworkTest,
    ::testing::Values(std::make_tuple(5, "2", "alltoall:hierarchical"),     // 3 + 2
                      std::make_tuple(7, "3", "alltoall:hierarchical"),     // 3 + 2 + 2
                      std::make_tuple(3, "2", "alltoall:hierarchical"),     // 2 + 1
                      std::make_tuple(6, "3/rr", "alltoall:hierarchical"),  // hosts {0,3} {1,4} {2,5}
                      std::make_tuple(4, "1", "alltoall:hierarchical"),     // one host
                      std::make_tuple(6, "2/rr", "")),                      // the selector's own choice
    [](const auto& info) {
      std::string hosts = std::get<1>(info.param);
      for (char& c : hosts) c = c == '/' ? '_' : c;
      std::string algo = std::get<2>(info.param);
      return std::to_string(std::get<0>(info.param)) + "ranks_" + hosts + "hosts_" +
             (algo.empty() ? "default" : "hierarchical");
    });

// A host with a lone rank, and ranks of one host talking over TCP: every rank must plan with the same costs (a lone
// rank once assumed shared memory within hosts while the others assumed the network, and a 0-byte allreduce chose
// different algorithms on different ranks and hung).
TEST(LoneRankHostTest, EveryRankPlansTheSameWhenHostsTalkOverTcp) {
  ProcessWorldOptions o;
  o.nranks = 5;
  o.worker = buildTreePath("tests/chorus_collective_worker");
  o.args = {"every_collective"};
  o.env = {{"CHORUS_CHUNK_SIZE", "4096"}, {"CHORUS_TIMEOUT", "60"}, {"CHORUS_TEST_HOSTS", "3"},
           {"CHORUS_TRANSPORT", "tcp"}, {"CHORUS_ALGO", ""}};
  o.deadline = 180s;
  ProcessWorldResult result = runProcessWorld(o);
  EXPECT_TRUE(result.allSucceeded()) << result.describe();
}

}  // namespace
}  // namespace chorus::test
