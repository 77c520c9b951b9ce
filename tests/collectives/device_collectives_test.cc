// The five collectives on device buffers (the emulated device: CHORUS_DEVICE_EMULATION=1), in process worlds of
// 2-4 ranks, checked against the host references, with NCCL's stream semantics: the call returns at once, reads
// the input a job enqueued just before it on the stream wrote, and a copy enqueued just after it reads the result.
// Also: host and device buffers mixed in one call are refused, a host call after device calls finds them done, a
// failed device call is reported as the async error without leaving its stream hung, and abort ends queued calls;
// where holding a stream is unsafe (one hardware queue) or asked not to be, calls block their caller instead.
//
// Each rank is this test binary again, running the disabled DeviceCollectivesWorker test (which reads its
// scenario from CHORUS_DEVICE_TEST_SCENARIO), so that the ranks can use the device API's internals.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/collectives/device_scenarios.h"
#include "tests/collectives/suite_knobs.h"
#include "tests/harness/build_tree.h"
#include "tests/harness/process_world.h"

namespace chorus::test {
namespace {

using device_scenarios::runDeviceScenario;

// Runs `scenario` on `nranks` ranks with the emulated device and the suite's knobs plus `extra`.
ProcessWorldResult runDeviceWorld(int nranks, const std::string& scenario, EnvSettings extra = {}) {
  ProcessWorldOptions o;
  o.nranks = nranks;
  o.worker = selfExecutable();
  o.args = {"--gtest_filter=DeviceCollectivesWorker.DISABLED_Rank", "--gtest_also_run_disabled_tests",
            "--gtest_brief=1"};
  extra.push_back({"CHORUS_DEVICE_EMULATION", "1"});
  extra.push_back({"CHORUS_DEVICE_TEST_SCENARIO", scenario});
  for (const auto& [name, value] : suiteKnobs(extra)) {
    // The harness sets variables only; "unset" becomes empty, which every knob reads as its default.
    o.env.push_back({name, value.value_or("")});
  }
  o.deadline = std::chrono::duration_cast<std::chrono::seconds>(kCaseDeadline);
  return runProcessWorld(o);
}

class DeviceCollectivesTest : public ::testing::TestWithParam<int> {};

TEST_P(DeviceCollectivesTest, EveryCollectiveInStreamOrder) {
  ProcessWorldResult r = runDeviceWorld(GetParam(), "collectives");
  EXPECT_TRUE(r.allSucceeded()) << r.describe();
}

TEST_P(DeviceCollectivesTest, MixedBuffersRefusedAndHostCallsFollowDeviceCalls) {
  ProcessWorldResult r = runDeviceWorld(GetParam(), "validation_and_order");
  EXPECT_TRUE(r.allSucceeded()) << r.describe();
}

// The suite slices device calls at 4 KiB; users get CHORUS_DEVICE_CHUNK_SIZE's default, with host calls' slices
// apart (CHORUS_CHUNK_SIZE stays at the suite's 4 KiB).
TEST(DeviceSliceTest, DefaultDeviceSlicesApartFromHostSlices) {
  ProcessWorldResult r = runDeviceWorld(2, "collectives", {{"CHORUS_DEVICE_CHUNK_SIZE", std::nullopt}});
  EXPECT_TRUE(r.allSucceeded()) << r.describe();
}

INSTANTIATE_TEST_SUITE_P(Worlds, DeviceCollectivesTest, ::testing::Values(2, 3, 4),
                         [](const auto& info) { return std::to_string(info.param) + "ranks"; });

// Every algorithm forced, on a world of three (not a power of two: the fix-ups run too).
class DeviceAlgorithmTest : public ::testing::TestWithParam<std::string> {};

TEST_P(DeviceAlgorithmTest, EveryCollectiveItImplements) {
  EnvSettings knobs = {{"CHORUS_ALGO", GetParam()}};
  if (GetParam() == "hierarchical") knobs.push_back({"CHORUS_DEVICE_TEST_HOSTS", "2"});
  ProcessWorldResult r = runDeviceWorld(3, "collectives_small", knobs);
  EXPECT_TRUE(r.allSucceeded()) << r.describe();
}

INSTANTIATE_TEST_SUITE_P(Algorithms, DeviceAlgorithmTest,
                         ::testing::Values("ring", "tree", "halving_doubling", "recursive_doubling", "hierarchical"),
                         [](const auto& info) { return info.param; });

TEST(DeviceCallFailureTest, AsyncErrorReleasesTheStreamAndFailsLaterCalls) {
  ProcessWorldResult r = runDeviceWorld(2, "failure", {{"CHORUS_TIMEOUT", "2"}});
  EXPECT_TRUE(r.allSucceeded()) << r.describe();
}

TEST(DeviceCallFailureTest, AbortEndsQueuedCallsAndReleasesTheStream) {
  ProcessWorldResult r = runDeviceWorld(2, "abort");
  EXPECT_TRUE(r.allSucceeded()) << r.describe();
}

// One hardware queue for every stream (CUDA_DEVICE_MAX_CONNECTIONS=1, as Megatron-LM sets it): a stream held until
// the call ends would hold the call's own copies behind it, as it did on an H100. The default (auto) makes the
// calls block their caller instead, and every collective completes, its result in place when the call returns.
TEST(DeviceHeldStreamTest, OneHardwareQueueMakesCallsBlockTheirCaller) {
  ProcessWorldResult r = runDeviceWorld(2, "collectives_small",
                                        {{"CUDA_DEVICE_MAX_CONNECTIONS", "1"}, {"CHORUS_DEVICE_TEST_BLOCKING", "1"}});
  EXPECT_TRUE(r.allSucceeded()) << r.describe();
}

// Blocking calls asked for, with nothing unsafe about holding the stream.
TEST(DeviceHeldStreamTest, BlockingCallsOnRequest) {
  ProcessWorldResult r = runDeviceWorld(3, "collectives_small",
                                        {{"CHORUS_DEVICE_CALLS", "blocking"}, {"CHORUS_DEVICE_TEST_BLOCKING", "1"}});
  EXPECT_TRUE(r.allSucceeded()) << r.describe();
}

// One rank of the worlds above (run only as a child, through runDeviceWorld).
TEST(DeviceCollectivesWorker, DISABLED_Rank) {
  const char* scenario = std::getenv("CHORUS_DEVICE_TEST_SCENARIO");
  ASSERT_NE(scenario, nullptr) << "run through runDeviceWorld";
  const std::string problems = runDeviceScenario(scenario);
  EXPECT_EQ(problems, "");
}

}  // namespace
}  // namespace chorus::test
