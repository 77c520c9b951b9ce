// When holding a stream until a device call ends is unsafe (device/stream_hold_hazard.h), and the emulated device
// sharing its hardware queues as a GPU does under CUDA_DEVICE_MAX_CONNECTIONS: a wait at the head of a queue holds
// every stream on it, as it does on an H100 (perf/results/gpu.md, "Device calls that hung").
#include "device/stream_hold_hazard.h"

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "device/poll_backoff.h"
#include "device/stream_flag.h"
#include "emulation/device/emulated_device_api.h"
#include "tests/harness/scoped_env.h"

namespace chorus {
namespace {

using Clock = std::chrono::steady_clock;

// Sets CUDA_DEVICE_MAX_CONNECTIONS for a scope (nullopt: unset), restoring what was there.
test::ScopedEnv connections(std::optional<std::string> value) {
  return test::ScopedEnv("CUDA_DEVICE_MAX_CONNECTIONS", std::move(value));
}

TEST(StreamHoldHazardTest, FewerQueuesThanTheDefaultOrMpsAreHazards) {
  {
    const auto unset = connections(std::nullopt);
    EXPECT_EQ(deviceMaxConnectionsFromEnv(), 0);
    EXPECT_EQ(streamHoldHazard(false), "");
    EXPECT_NE(streamHoldHazard(true).find("MPS"), std::string::npos);
  }
  {
    const auto one = connections("1");
    EXPECT_EQ(deviceMaxConnectionsFromEnv(), 1);
    const std::string why = streamHoldHazard(false);
    EXPECT_NE(why.find("CUDA_DEVICE_MAX_CONNECTIONS=1"), std::string::npos) << why;
    EXPECT_NE(why.find("1 hardware queue,"), std::string::npos) << why;
  }
  {
    const auto four = connections("4");
    EXPECT_NE(streamHoldHazard(false), "");
  }
  {
    const auto eight = connections("8");
    EXPECT_EQ(streamHoldHazard(false), "");
    EXPECT_NE(streamHoldHazard(true), "");  // under MPS, 8 hung on the H100
  }
  {
    const auto many = connections("32");
    EXPECT_EQ(streamHoldHazard(true), "");
  }
  for (const char* bad : {"", "0", "-3", "two", "8x"}) {
    const auto ignored = connections(bad);
    EXPECT_EQ(deviceMaxConnectionsFromEnv(), 0) << bad;
    EXPECT_EQ(streamHoldHazard(false), "") << bad;
  }
}

// Holds stream `held` at a flag and records an event on `other`; says whether the event completed within `wait`.
bool otherStreamRunsWhileHeld(DeviceApi& api, std::chrono::milliseconds wait) {
  auto* flag = static_cast<uint32_t*>(api.pinnedAlloc(64));
  *flag = 0;
  DeviceStream held = api.createStream();
  DeviceStream other = api.createStream();
  DeviceEvent e = api.createEvent();
  api.streamWaitFlag(held, flag, 1);
  api.recordEvent(e, other);
  bool ran = false;
  PollBackoff backoff;
  for (const auto until = Clock::now() + wait; !ran && Clock::now() < until; backoff.pause()) ran = api.eventDone(e);
  raiseStreamFlag(api, flag, 1);
  api.synchronize(held);
  api.synchronize(other);
  EXPECT_TRUE(api.eventDone(e));  // released with the hold, in any case
  api.destroyEvent(e);
  api.destroyStream(other);
  api.destroyStream(held);
  api.pinnedFree(flag);
  return ran;
}

TEST(EmulatedHardwareQueuesTest, StreamsHaveQueuesOfTheirOwnByDefault) {
  const auto unset = connections(std::nullopt);
  EmulatedDeviceApi api;
  EXPECT_TRUE(otherStreamRunsWhileHeld(api, std::chrono::seconds(20)));
  EXPECT_EQ(api.streamHoldHazard(0), "");
}

TEST(EmulatedHardwareQueuesTest, OneQueueHoldsEveryStreamBehindAWait) {
  const auto one = connections("1");
  EmulatedDeviceApi api;
  // A bounded look for something that must not happen: the event sits behind the hold on the one queue.
  EXPECT_FALSE(otherStreamRunsWhileHeld(api, std::chrono::milliseconds(200)));
  EXPECT_NE(api.streamHoldHazard(0), "");
}

TEST(EmulatedHardwareQueuesTest, StreamsShareQueuesRoundRobin) {
  const auto two = connections("2");
  EmulatedDeviceApi api;
  // Streams 1 and 3 share a queue, 2 has the other: holding 1 holds 3, not 2.
  auto* flag = static_cast<uint32_t*>(api.pinnedAlloc(64));
  *flag = 0;
  std::vector<DeviceStream> s = {api.createStream(), api.createStream(), api.createStream()};
  DeviceEvent second = api.createEvent(), third = api.createEvent();
  api.streamWaitFlag(s[0], flag, 1);
  api.recordEvent(second, s[1]);
  api.recordEvent(third, s[2]);
  PollBackoff backoff;
  for (const auto until = Clock::now() + std::chrono::seconds(20); !api.eventDone(second) && Clock::now() < until;) {
    backoff.pause();
  }
  EXPECT_TRUE(api.eventDone(second));
  EXPECT_FALSE(api.eventDone(third));
  raiseStreamFlag(api, flag, 1);
  for (DeviceStream x : s) api.synchronize(x);
  EXPECT_TRUE(api.eventDone(third));
  api.destroyEvent(second);
  api.destroyEvent(third);
  for (DeviceStream x : s) api.destroyStream(x);
  api.pinnedFree(flag);
}

}  // namespace
}  // namespace chorus
