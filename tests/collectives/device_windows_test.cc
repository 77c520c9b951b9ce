// Windows of device memory (put and signal on a CUDA stream) on the emulated device, 1 to 5 ranks as threads of
// this process (peers use each other's pointers) and as processes (peers open each other's windows by the
// emulation's CUDA IPC): every scenario of device_window_scenarios.h. Also: device windows across machines are
// refused at registration, naming the rank.
//
// The process ranks are this test binary again, running the disabled DeviceWindowsWorker test.
#include "src/comm/device_windows.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "tests/collectives/device_window_scenarios.h"
#include "tests/collectives/suite_knobs.h"
#include "tests/harness/build_tree.h"
#include "tests/harness/process_world.h"
#include "tests/harness/scoped_env.h"
#include "tests/harness/thread_world.h"

namespace chorus::test {
namespace {

// One rank's run of every scenario on its communicator; "" or what went wrong.
std::string runRank(chorusComm_t comm) {
  device_windows::Rank w;
  w.comm = comm;
  chorusCommUserRank(comm, &w.rank);
  chorusCommCount(comm, &w.n);
  w.api = &deviceApi();
  if (std::string(w.api->name()) != "emulated") return std::string("the device API is ") + w.api->name();
  w.stream = w.api->createStream();
  std::string problems = device_windows::runAll(w);
  w.api->destroyStream(w.stream);
  return problems;
}

class DeviceWindowsThreads : public ::testing::TestWithParam<int> {};

TEST_P(DeviceWindowsThreads, EveryScenario) {
  ScopedEnv emulated("CHORUS_DEVICE_EMULATION", "1");
  runThreadWorld(
      GetParam(), [&](chorusComm_t comm, int) { EXPECT_EQ(runRank(comm), ""); }, kCaseDeadline, suiteConfig());
}

INSTANTIATE_TEST_SUITE_P(Worlds, DeviceWindowsThreads, ::testing::Values(1, 2, 3, 4, 5),
                         [](const auto& info) { return std::to_string(info.param) + "ranks"; });

ProcessWorldResult runWorld(int nranks, const std::string& scenario, EnvSettings extra = {}) {
  ProcessWorldOptions o;
  o.nranks = nranks;
  o.worker = selfExecutable();
  o.args = {"--gtest_filter=DeviceWindowsWorker.DISABLED_Rank", "--gtest_also_run_disabled_tests", "--gtest_brief=1"};
  extra.push_back({"CHORUS_DEVICE_EMULATION", "1"});
  extra.push_back({"CHORUS_DEVICE_WINDOW_SCENARIO", scenario});
  for (const auto& [name, value] : suiteKnobs(extra)) o.env.push_back({name, value.value_or("")});
  o.deadline = std::chrono::duration_cast<std::chrono::seconds>(kCaseDeadline);
  return runProcessWorld(o);
}

class DeviceWindowsProcesses : public ::testing::TestWithParam<int> {};

TEST_P(DeviceWindowsProcesses, EveryScenario) {
  ProcessWorldResult r = runWorld(GetParam(), "all");
  EXPECT_TRUE(r.allSucceeded()) << r.describe();
}

INSTANTIATE_TEST_SUITE_P(Worlds, DeviceWindowsProcesses, ::testing::Values(1, 2, 3, 4, 5),
                         [](const auto& info) { return std::to_string(info.param) + "ranks"; });

// Ranks 0-1 and 2-3 on two machines (what PeerConnections::sameMachine says; emulated hosts share one machine,
// so the cards are made here from each rank's view): CUDA IPC cannot reach across, so every rank refuses the device
// window, naming rank 2.
TEST(DeviceWindowsAcrossMachines, RefusedOnEveryRankNamingTheFirstRankElsewhere) {
  ScopedEnv emulated("CHORUS_DEVICE_EMULATION", "1");
  DeviceApi& api = deviceApi();
  constexpr int kRanks = 4;
  std::vector<std::unique_ptr<DeviceWindows>> ranks;
  std::vector<std::unique_ptr<device_windows::DeviceBuffer>> buffers;
  std::vector<uint64_t> cards;
  for (int r = 0; r < kRanks; ++r) {
    std::vector<bool> sameMachine(kRanks);
    for (int p = 0; p < kRanks; ++p) sameMachine[p] = (p / 2) == (r / 2);
    ranks.push_back(std::make_unique<DeviceWindows>(r, kRanks));
    buffers.push_back(std::make_unique<device_windows::DeviceBuffer>(api, 256));
    const std::vector<uint64_t> card = ranks.back()->card(api, buffers.back()->p, 256, true, sameMachine);
    cards.insert(cards.end(), card.begin(), card.end());
  }
  ASSERT_TRUE(DeviceWindows::anyOnDevice(cards));
  for (int r = 0; r < kRanks; ++r) {
    Window win;
    win.id = 1;
    try {
      ranks[r]->open(win, cards);
      ADD_FAILURE() << "rank " << r << " opened a device window across machines";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), chorusInvalidUsage);
      EXPECT_NE(std::string(e.what()).find("rank 2 is not on rank 0's machine"), std::string::npos) << e.what();
    }
  }
}

// One rank of the process worlds above (run only as a child, through runWorld).
TEST(DeviceWindowsWorker, DISABLED_Rank) {
  const char* scenario = std::getenv("CHORUS_DEVICE_WINDOW_SCENARIO");
  ASSERT_NE(scenario, nullptr) << "run through runWorld";
  chorusComm_t comm = nullptr;
  ASSERT_EQ(chorusCommInitFromEnv(&comm), chorusSuccess) << chorusGetLastError(nullptr);
  const std::string problems = runRank(comm);
  EXPECT_EQ(problems, "");
  chorusCommDestroy(comm);
}

}  // namespace
}  // namespace chorus::test
