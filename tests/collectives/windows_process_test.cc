// Windows (chorus.h's put and signal) in process worlds of 1 to 5 ranks: shared memory (with CHORUS_SHM_CMA=2 puts
// stored straight into the target's window by process_vm_writev; with 0 through the ring), TCP, and the ib transport on
// the software verbs device across emulated hosts. Each rank runs chorus_window_worker's checks
// (tests/collectives/window_worker.cc).
#include <gtest/gtest.h>

#include <string>

#include "tests/harness/build_tree.h"
#include "tests/harness/process_world.h"

namespace chorus::test {
namespace {

using namespace std::chrono_literals;

struct WindowWorld {
  int nranks;
  std::string transport;  // CHORUS_TRANSPORT
  std::string hosts;      // CHORUS_TEST_HOSTS ("" one host)
  std::string cma = "";   // CHORUS_SHM_CMA ("" the default; 2: puts stored directly; 0: through the ring)
};

class WindowsProcess : public ::testing::TestWithParam<WindowWorld> {};

TEST_P(WindowsProcess, EveryCheckRight) {
  const WindowWorld& w = GetParam();
#ifndef CHORUS_HAVE_VERBS
  if (w.transport == "ib") GTEST_SKIP() << "built without verbs";
#endif
  ProcessWorldOptions o;
  o.nranks = w.nranks;
  o.worker = buildTreePath("tests/chorus_window_worker");
  o.env = {{"CHORUS_TIMEOUT", "60"},
           {"CHORUS_TRANSPORT", w.transport},
           {"CHORUS_TEST_HOSTS", w.hosts},
           {"CHORUS_IB_EMULATION", w.transport == "ib" ? "1" : ""},
           {"CHORUS_SHM_CMA", w.cma}};
  o.deadline = 240s;
  ProcessWorldResult result = runProcessWorld(o);
  EXPECT_TRUE(result.allSucceeded()) << result.describe();
  for (int r = 0; r < static_cast<int>(result.ranks.size()); ++r) {
    EXPECT_NE(result.ranks[r].output.find("windows: 6 checks right"), std::string::npos)
        << "rank " << r << ": " << result.ranks[r].output;
  }
}

// A rank that exits without a word while its peer waits for its signal: the wait fails promptly as a lost peer
// naming it (far before CHORUS_TIMEOUT), on each transport.
class WindowsPeerLoss : public ::testing::TestWithParam<WindowWorld> {};

TEST_P(WindowsPeerLoss, AWaitOnALostPeerFailsNamingIt) {
  const WindowWorld& w = GetParam();
#ifndef CHORUS_HAVE_VERBS
  if (w.transport == "ib") GTEST_SKIP() << "built without verbs";
#endif
  ProcessWorldOptions o;
  o.nranks = 2;
  o.worker = buildTreePath("tests/chorus_window_worker");
  o.env = {{"CHORUS_TIMEOUT", "120"},
           {"CHORUS_TRANSPORT", w.transport},
           {"CHORUS_TEST_HOSTS", w.hosts},
           {"CHORUS_IB_EMULATION", w.transport == "ib" ? "1" : ""},
           {"CHORUS_WINDOW_WORKER_SCENARIO", "peer_dies"}};
  o.deadline = 60s;  // half the timeout: only a prompt failure passes
  o.killOnFirstFailure = false;
  ProcessWorldResult result = runProcessWorld(o);
  EXPECT_TRUE(result.allSucceeded()) << result.describe();
  EXPECT_NE(result.ranks[0].output.find("peer loss seen"), std::string::npos) << result.ranks[0].output;
}

// Over ib every put is RDMA writes into the peer's window: the log names the path (WindowChannel::describe), and the
// worker's checks above ran on it.
TEST(WindowsIbPath, PutsGoByRdmaWrite) {
#ifndef CHORUS_HAVE_VERBS
  GTEST_SKIP() << "built without verbs";
#endif
  ProcessWorldOptions o;
  o.nranks = 2;
  o.worker = buildTreePath("tests/chorus_window_worker");
  o.env = {{"CHORUS_TIMEOUT", "60"},     {"CHORUS_TRANSPORT", "ib"}, {"CHORUS_TEST_HOSTS", "2"},
           {"CHORUS_IB_EMULATION", "1"}, {"CHORUS_DEBUG", "INFO"},   {"CHORUS_WINDOW_WORKER_SCENARIO", "one_put"}};
  o.deadline = 60s;
  ProcessWorldResult result = runProcessWorld(o);
  EXPECT_TRUE(result.allSucceeded()) << result.describe();
  for (int r = 0; r < 2; ++r) {
    EXPECT_NE(result.ranks[r].output.find("windows: puts travel by ib rdma write\n"), std::string::npos)
        << "rank " << r << ": " << result.ranks[r].output;
    EXPECT_NE(result.ranks[r].output.find("one put right"), std::string::npos) << result.ranks[r].output;
  }
}

INSTANTIATE_TEST_SUITE_P(Worlds, WindowsPeerLoss,
                         ::testing::Values(WindowWorld{2, "shm", ""}, WindowWorld{2, "tcp", ""},
                                           WindowWorld{2, "ib", "2"}),
                         [](const auto& info) { return info.param.transport; });

INSTANTIATE_TEST_SUITE_P(Worlds, WindowsProcess,
                         ::testing::Values(WindowWorld{1, "shm", ""}, WindowWorld{2, "shm", ""},
                                           WindowWorld{2, "shm", "", "2"}, WindowWorld{5, "shm", "", "2"},
                                           WindowWorld{3, "shm", "", "0"}, WindowWorld{2, "tcp", ""},
                                           WindowWorld{5, "tcp", ""}, WindowWorld{2, "ib", "2"},
                                           WindowWorld{3, "ib", "2"}, WindowWorld{5, "ib", "3"}),
                         [](const auto& info) {
                           return std::to_string(info.param.nranks) + "ranks_" + info.param.transport +
                                  (info.param.cma == "0"   ? "_ring"
                                   : info.param.cma == "2" ? "_direct"
                                                           : "");
                         });

}  // namespace
}  // namespace chorus::test
