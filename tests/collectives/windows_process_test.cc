// Windows (chorus.h's put and signal) in process worlds of 1 to 5 ranks: shared memory (with CHORUS_SHM_CMA=2 puts
// stored straight into the target's window by process_vm_writev; with 0 through the ring; with chorusMemAlloc windows
// a copy by the sender into the target's window it mapped, and signals as counters), TCP, and the ib transport on
// the software verbs device across emulated hosts. Each rank runs chorus_window_worker's checks
// (tests/collectives/window_worker.cc).
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
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
  bool memAlloc = false;  // windows in chorusMemAlloc memory (CHORUS_WINDOW_WORKER_MEMALLOC)
};

// The names in /dev/shm now: a job must add none that outlive it (chorusMemAlloc's memory is a memfd, the shm
// transport's segments are unlinked as soon as they are made).
std::set<std::string> devShmNames() {
  std::set<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/dev/shm", ec)) names.insert(e.path().filename());
  return names;
}

std::string leftInDevShm(const std::set<std::string>& before) {
  std::string left;
  for (const std::string& n : devShmNames()) {
    if (!before.count(n) && n.rfind("chorus", 0) == 0) left += " " + n;
  }
  return left;
}

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
           {"CHORUS_SHM_CMA", w.cma},
           {"CHORUS_WINDOW_WORKER_MEMALLOC", w.memAlloc ? "1" : ""},
           {"CHORUS_DEBUG", w.memAlloc ? "INFO" : ""}};
  o.deadline = 240s;
  const std::set<std::string> before = devShmNames();
  ProcessWorldResult result = runProcessWorld(o);
  EXPECT_TRUE(result.allSucceeded()) << result.describe();
  const std::string checks = w.memAlloc ? "windows: 7 checks right" : "windows: 6 checks right";
  for (int r = 0; r < static_cast<int>(result.ranks.size()); ++r) {
    EXPECT_NE(result.ranks[r].output.find(checks), std::string::npos) << "rank " << r << ": " << result.ranks[r].output;
    // Every rank maps its peers' windows: the path is in use, not only offered.
    if (w.memAlloc && w.nranks > 1) {
      EXPECT_NE(result.ranks[r].output.find("by shm mapped window"), std::string::npos)
          << "rank " << r << ": " << result.ranks[r].output;
    }
  }
  EXPECT_EQ(leftInDevShm(before), "");
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
           {"CHORUS_WINDOW_WORKER_SCENARIO", "peer_dies"},
           {"CHORUS_WINDOW_WORKER_MEMALLOC", w.memAlloc ? "1" : ""}};
  o.deadline = 60s;  // half the timeout: only a prompt failure passes
  o.killOnFirstFailure = false;
  const std::set<std::string> before = devShmNames();
  ProcessWorldResult result = runProcessWorld(o);
  EXPECT_TRUE(result.allSucceeded()) << result.describe();
  EXPECT_NE(result.ranks[0].output.find("peer loss seen"), std::string::npos) << result.ranks[0].output;
  EXPECT_EQ(leftInDevShm(before), "");
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
                         ::testing::Values(WindowWorld{2, "shm", ""}, WindowWorld{2, "shm", "", "", true},
                                           WindowWorld{2, "tcp", ""}, WindowWorld{2, "ib", "2"}),
                         [](const auto& info) {
                           return info.param.transport + (info.param.memAlloc ? "_memalloc" : "");
                         });

INSTANTIATE_TEST_SUITE_P(Worlds, WindowsProcess,
                         ::testing::Values(WindowWorld{1, "shm", ""}, WindowWorld{2, "shm", ""},
                                           WindowWorld{2, "shm", "", "2"}, WindowWorld{5, "shm", "", "2"},
                                           WindowWorld{3, "shm", "", "0"}, WindowWorld{2, "tcp", ""},
                                           WindowWorld{5, "tcp", ""}, WindowWorld{2, "ib", "2"},
                                           WindowWorld{3, "ib", "2"}, WindowWorld{5, "ib", "3"},
                                           WindowWorld{1, "shm", "", "", true}, WindowWorld{2, "shm", "", "", true},
                                           WindowWorld{3, "shm", "", "", true}, WindowWorld{5, "shm", "", "", true}),
                         [](const auto& info) {
                           return std::to_string(info.param.nranks) + "ranks_" + info.param.transport +
                                  (info.param.cma == "0"   ? "_ring"
                                   : info.param.cma == "2" ? "_direct"
                                   : info.param.memAlloc   ? "_memalloc"
                                                           : "");
                         });

}  // namespace
}  // namespace chorus::test
