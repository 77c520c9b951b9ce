// Every collective over the ib transport on the software verbs device (CHORUS_IB_EMULATION=1), across emulated
// hosts: with CHORUS_TRANSPORT=ib every pair uses it; by default it carries the pairs between hosts and shared
// memory the pairs within one. Each algorithm forced (a name applies to the collectives that have it; the others
// keep the selector's choice), and the selector's own choice.
#ifdef CHORUS_HAVE_VERBS
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "tests/harness/build_tree.h"
#include "tests/harness/process_world.h"

namespace chorus::test {
namespace {

using namespace std::chrono_literals;

struct IbWorld {
  int nranks;
  std::string hosts;      // CHORUS_TEST_HOSTS
  std::string transport;  // CHORUS_TRANSPORT ("" every transport)
  std::string algo;       // CHORUS_ALGO ("" the selector's)
  std::string lanes;      // CHORUS_IB_QPS_PER_PEER
};

class IbCollectivesTest : public ::testing::TestWithParam<IbWorld> {};

TEST_P(IbCollectivesTest, EveryCollectiveMatchesTheReference) {
  const IbWorld& w = GetParam();
  ProcessWorldOptions o;
  o.nranks = w.nranks;
  o.worker = buildTreePath("tests/chorus_collective_worker");
  o.args = {"every_collective"};
  o.env = {{"CHORUS_CHUNK_SIZE", "4096"},  {"CHORUS_TIMEOUT", "60"},         {"CHORUS_TEST_HOSTS", w.hosts},
           {"CHORUS_IB_EMULATION", "1"},  {"CHORUS_TRANSPORT", w.transport}, {"CHORUS_ALGO", w.algo},
           {"CHORUS_IB_QPS_PER_PEER", w.lanes}};
  o.deadline = 200s;
  ProcessWorldResult result = runProcessWorld(o);
  EXPECT_TRUE(result.allSucceeded()) << result.describe();
  for (int r = 0; r < static_cast<int>(result.ranks.size()); ++r) {
    EXPECT_NE(result.ranks[r].output.find("calls right"), std::string::npos)
        << "rank " << r << ": " << result.ranks[r].output;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Worlds, IbCollectivesTest,
    ::testing::Values(IbWorld{2, "2", "ib", "", "1"},                      // two hosts, one rank each
                      IbWorld{2, "2", "ib", "ring", "3"},                  // three queue pairs per peer
                      IbWorld{4, "2", "ib", "ring", "1"},                  // every pair on ib, even within a host
                      IbWorld{4, "2", "ib", "tree", "1"},
                      IbWorld{4, "4", "ib", "halving_doubling", "1"},
                      IbWorld{5, "2", "ib", "recursive_doubling", "1"},
                      IbWorld{6, "3", "ib", "ring", "1"},
                      IbWorld{4, "2", "ib", "bruck", "1"},                 // alltoall(v)
                      IbWorld{5, "3", "ib", "binomial", "1"},              // gather, scatter, rooted calls
                      IbWorld{3, "3", "ib", "direct", "2"},
                      IbWorld{7, "4", "ib", "pairwise", "1"},
                      IbWorld{6, "3/rr", "", "hierarchical", "1"},         // ib between hosts, shm within
                      IbWorld{8, "4", "", "", "2"},                        // the selector's choice, 4 hosts
                      IbWorld{8, "2", "ib", "", "1"}),
    [](const auto& info) {
      const IbWorld& w = info.param;
      std::string hosts = w.hosts;
      for (char& c : hosts) c = c == '/' ? '_' : c;
      return std::to_string(w.nranks) + "ranks_" + hosts + "hosts_" + (w.transport.empty() ? "mixed" : w.transport) +
             "_" + (w.algo.empty() ? "default" : w.algo) + "_" + w.lanes + "qp";
    });

}  // namespace
}  // namespace chorus::test
#endif  // CHORUS_HAVE_VERBS
