// The device collective scenarios of tests/collectives/device_collectives_test.cc on the real GPU (CUDA device
// API: cudaMalloc'd buffers, CUDA streams, cuStreamWaitValue32, CUDA IPC between the ranks' processes), in process
// worlds of 2 and 3 ranks sharing the machine's GPU 0. Skips without a device.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/collectives/device_scenarios.h"
#include "tests/collectives/suite_knobs.h"
#include "tests/gpu/gpu_test_support.h"
#include "tests/harness/build_tree.h"
#include "tests/harness/process_world.h"

namespace chorus::test {
namespace {

ProcessWorldResult runGpuWorld(int nranks, const std::string& scenario, EnvSettings extra = {}) {
  ProcessWorldOptions o;
  o.nranks = nranks;
  o.worker = selfExecutable();
  o.args = {"--gtest_filter=DeviceCollectivesGpuWorker.DISABLED_Rank", "--gtest_also_run_disabled_tests",
            "--gtest_brief=1"};
  extra.push_back({"CHORUS_DEVICE_EMULATION", "0"});
  extra.push_back({"CHORUS_DEVICE_TEST_API", "cuda"});
  extra.push_back({"CHORUS_DEVICE_TEST_SCENARIO", scenario});
  for (const auto& [name, value] : suiteKnobs(extra)) o.env.push_back({name, value.value_or("")});
  o.deadline = std::chrono::duration_cast<std::chrono::seconds>(kCaseDeadline);
  return runProcessWorld(o);
}

class DeviceCollectivesGpuTest : public ::testing::TestWithParam<int> {};

TEST_P(DeviceCollectivesGpuTest, EveryCollectiveInStreamOrder) {
  CHORUS_REQUIRE_CUDA_DEVICE();
  ProcessWorldResult r = runGpuWorld(GetParam(), "collectives");
  EXPECT_TRUE(r.allSucceeded()) << r.describe();
}

TEST_P(DeviceCollectivesGpuTest, MixedBuffersRefusedAndHostCallsFollowDeviceCalls) {
  CHORUS_REQUIRE_CUDA_DEVICE();
  ProcessWorldResult r = runGpuWorld(GetParam(), "validation_and_order");
  EXPECT_TRUE(r.allSucceeded()) << r.describe();
}

INSTANTIATE_TEST_SUITE_P(Worlds, DeviceCollectivesGpuTest, ::testing::Values(2, 3),
                         [](const auto& info) { return std::to_string(info.param) + "ranks"; });

TEST(DeviceCallFailureGpuTest, AsyncErrorReleasesTheStreamAndFailsLaterCalls) {
  CHORUS_REQUIRE_CUDA_DEVICE();
  ProcessWorldResult r = runGpuWorld(2, "failure", {{"CHORUS_TIMEOUT", "2"}});
  EXPECT_TRUE(r.allSucceeded()) << r.describe();
}

TEST(DeviceCallFailureGpuTest, AbortEndsQueuedCallsAndReleasesTheStream) {
  CHORUS_REQUIRE_CUDA_DEVICE();
  ProcessWorldResult r = runGpuWorld(2, "abort");
  EXPECT_TRUE(r.allSucceeded()) << r.describe();
}

// One rank of the worlds above (run only as a child, through runGpuWorld).
TEST(DeviceCollectivesGpuWorker, DISABLED_Rank) {
  const char* scenario = std::getenv("CHORUS_DEVICE_TEST_SCENARIO");
  ASSERT_NE(scenario, nullptr) << "run through runGpuWorld";
  EXPECT_EQ(device_scenarios::runDeviceScenario(scenario), "");
}

}  // namespace
}  // namespace chorus::test
