// The emulated device runtime behaves as the CUDA runtime does where Chorus relies on it: streams run in order and
// asynchronously, waits (events, flags) hold the stream and never the host, events report completion, device
// memory is recognised anywhere inside an allocation, and IPC handles map the same pages in another process.
#include "emulation/device/emulated_device_api.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "device/poll_backoff.h"
#include "device/stream_flag.h"

namespace chorus {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kDeadline = std::chrono::seconds(20);

// Polls an event until done, failing the test (instead of hanging) past the deadline.
::testing::AssertionResult eventuallyDone(DeviceApi& api, DeviceEvent e) {
  const auto until = Clock::now() + kDeadline;
  PollBackoff backoff;
  while (!api.eventDone(e)) {
    if (Clock::now() > until) return ::testing::AssertionFailure() << "event not done within the deadline";
    backoff.pause();
  }
  return ::testing::AssertionSuccess();
}

void raise(uint32_t* flag, uint32_t value) { __atomic_store_n(flag, value, __ATOMIC_RELEASE); }

// Waits for a forked child, killing it past the deadline; returns its exit code (-1: killed or signalled).
int reap(pid_t child) {
  const auto until = Clock::now() + kDeadline;
  PollBackoff backoff;
  int status = 0;
  for (;;) {
    const pid_t r = waitpid(child, &status, WNOHANG);
    if (r == child) break;
    if (r < 0) return -1;
    if (Clock::now() > until) {
      kill(child, SIGKILL);
      waitpid(child, &status, 0);
      return -1;
    }
    backoff.pause();
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class EmulatedDeviceApiTest : public ::testing::Test {
 protected:
  EmulatedDeviceApi api_;
};

TEST_F(EmulatedDeviceApiTest, StreamRunsCopiesInOrder) {
  DeviceStream s = api_.createStream();
  std::vector<int> a(1000), b(1000, 0), c(1000, 0);
  std::iota(a.begin(), a.end(), 7);
  api_.copyAsync(b.data(), a.data(), a.size() * sizeof(int), s);
  api_.copyAsync(c.data(), b.data(), b.size() * sizeof(int), s);  // reads what the first copy wrote
  api_.synchronize(s);
  EXPECT_EQ(c, a);
  api_.destroyStream(s);
}

TEST_F(EmulatedDeviceApiTest, FlagWaitHoldsTheStreamNotTheHost) {
  DeviceStream s = api_.createStream();
  auto* flag = static_cast<uint32_t*>(api_.pinnedAlloc(64));
  *flag = 0;
  int src = 42, dst = 0;
  DeviceEvent after = api_.createEvent();
  api_.streamWaitFlag(s, flag, 3);  // returns at once: the host is not held
  api_.copyAsync(&dst, &src, sizeof(int), s);
  api_.recordEvent(after, s);
  raise(flag, 2);  // not yet enough
  // The copy is behind a wait for 3: it cannot have run, whatever the timing.
  EXPECT_FALSE(api_.eventDone(after));
  EXPECT_EQ(dst, 0);
  raiseStreamFlag(api_, flag, 3);  // wakes the worker at once
  EXPECT_TRUE(eventuallyDone(api_, after));
  EXPECT_EQ(dst, 42);
  api_.destroyEvent(after);
  api_.pinnedFree(flag);
  api_.destroyStream(s);
}

double processCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// A stream held at a flag for a while sleeps: the process spends a small fraction of that time on the CPU.
TEST_F(EmulatedDeviceApiTest, WaitingStreamsDoNotBurnACore) {
  DeviceStream s = api_.createStream();
  auto* flag = static_cast<uint32_t*>(api_.pinnedAlloc(4));
  *flag = 0;
  DeviceEvent gate = api_.createEvent(), after = api_.createEvent();
  DeviceStream other = api_.createStream();
  api_.streamWaitFlag(s, flag, 1);
  api_.recordEvent(gate, s);
  api_.streamWaitEvent(other, gate);  // a second worker, waiting on an event
  api_.recordEvent(after, other);
  const double cpuBefore = processCpuSeconds();
  const auto wallBefore = Clock::now();
  // Not synchronization: the waits are meant to last, and this measures what they cost meanwhile.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const double cpu = processCpuSeconds() - cpuBefore;
  const double wall = std::chrono::duration<double>(Clock::now() - wallBefore).count();
  EXPECT_FALSE(api_.eventDone(after));
  raiseStreamFlag(api_, flag, 1);
  EXPECT_TRUE(eventuallyDone(api_, after));
  EXPECT_LT(cpu, 0.2 * wall) << "two waiting streams used " << cpu << " s of CPU in " << wall << " s";
  api_.destroyEvent(gate);
  api_.destroyEvent(after);
  api_.pinnedFree(flag);
  api_.destroyStream(s);
  api_.destroyStream(other);
}

TEST_F(EmulatedDeviceApiTest, FlagComparisonIsCyclicLikeStreamWaitValueGeq) {
  DeviceStream s = api_.createStream();
  auto* flag = static_cast<uint32_t*>(api_.pinnedAlloc(4));
  *flag = 0xfffffff0u;  // a counter about to wrap
  DeviceEvent after = api_.createEvent();
  api_.streamWaitFlag(s, flag, 5);  // 5 comes after 0xfffffff0 once the counter wraps
  api_.recordEvent(after, s);
  EXPECT_FALSE(api_.eventDone(after));
  raise(flag, 5);
  EXPECT_TRUE(eventuallyDone(api_, after));
  api_.destroyEvent(after);
  api_.pinnedFree(flag);
  api_.destroyStream(s);
}

TEST_F(EmulatedDeviceApiTest, StreamWaitsForAnEventOfAnotherStream) {
  DeviceStream producer = api_.createStream(), consumer = api_.createStream();
  auto* flag = static_cast<uint32_t*>(api_.pinnedAlloc(4));
  *flag = 0;
  int first = 1, middle = 0, last = 0;
  DeviceEvent produced = api_.createEvent(), consumed = api_.createEvent();
  api_.streamWaitFlag(producer, flag, 1);
  api_.copyAsync(&middle, &first, sizeof(int), producer);
  api_.recordEvent(produced, producer);
  api_.streamWaitEvent(consumer, produced);
  api_.copyAsync(&last, &middle, sizeof(int), consumer);
  api_.recordEvent(consumed, consumer);
  EXPECT_FALSE(api_.eventDone(produced));
  EXPECT_FALSE(api_.eventDone(consumed));
  raise(flag, 1);
  EXPECT_TRUE(eventuallyDone(api_, consumed));
  EXPECT_EQ(last, 1);  // the consumer copied after the producer's copy, not before
  EXPECT_TRUE(api_.eventDone(produced));
  api_.destroyEvent(produced);
  api_.destroyEvent(consumed);
  api_.pinnedFree(flag);
  api_.destroyStream(producer);
  api_.destroyStream(consumer);
}

TEST_F(EmulatedDeviceApiTest, EventsNeverRecordedAreDoneAndReRecordingTracksTheLatest) {
  DeviceStream s = api_.createStream();
  DeviceEvent e = api_.createEvent();
  EXPECT_TRUE(api_.eventDone(e));
  api_.streamWaitEvent(s, e);  // nothing to wait for
  auto* flag = static_cast<uint32_t*>(api_.pinnedAlloc(4));
  *flag = 0;
  api_.recordEvent(e, s);
  EXPECT_TRUE(eventuallyDone(api_, e));
  api_.streamWaitFlag(s, flag, 1);
  api_.recordEvent(e, s);
  EXPECT_FALSE(api_.eventDone(e));
  raise(flag, 1);
  EXPECT_TRUE(eventuallyDone(api_, e));
  api_.destroyEvent(e);
  api_.pinnedFree(flag);
  api_.destroyStream(s);
}

TEST_F(EmulatedDeviceApiTest, LegacyDefaultStreamIsAStream) {
  auto* flag = static_cast<uint32_t*>(api_.pinnedAlloc(4));
  *flag = 0;
  int src = 9, dst = 0;
  DeviceEvent e = api_.createEvent();
  api_.streamWaitFlag(nullptr, flag, 1);
  api_.copyAsync(&dst, &src, sizeof(int), nullptr);
  api_.recordEvent(e, nullptr);
  EXPECT_FALSE(api_.eventDone(e));
  raise(flag, 1);
  api_.synchronize(nullptr);
  EXPECT_EQ(dst, 9);
  EXPECT_TRUE(api_.eventDone(e));
  api_.destroyEvent(e);
  api_.pinnedFree(flag);
}

TEST_F(EmulatedDeviceApiTest, ReducerSeesWhatTheStreamCopiedBefore) {
  DeviceStream s = api_.createStream();
  auto* a = static_cast<float*>(api_.deviceAlloc(64 * sizeof(float)));
  auto* b = static_cast<float*>(api_.deviceAlloc(64 * sizeof(float)));
  std::vector<float> hostA(64, 1.5f), hostB(64, 2.0f), out(64, 0);
  api_.copyAsync(a, hostA.data(), 64 * sizeof(float), s);
  api_.copyAsync(b, hostB.data(), 64 * sizeof(float), s);
  api_.reducer(s).reduce(a, a, b, 64, chorusFloat32, chorusSum);  // no synchronize in between: the reducer orders
  api_.copyAsync(out.data(), a, 64 * sizeof(float), s);
  api_.synchronize(s);
  for (float v : out) EXPECT_EQ(v, 3.5f);
  api_.deviceFree(a);
  api_.deviceFree(b);
  api_.destroyStream(s);
}

TEST_F(EmulatedDeviceApiTest, LocateKnowsEveryByteOfDeviceMemory) {
  constexpr size_t kBytes = 10000;
  auto* d = static_cast<char*>(api_.deviceAlloc(kBytes));
  ASSERT_NE(d, nullptr);
  int device = -1;
  EXPECT_EQ(api_.locate(d, &device), MemoryLocation::kDevice);
  EXPECT_EQ(device, 0);
  EXPECT_EQ(api_.locate(d + kBytes - 1, nullptr), MemoryLocation::kDevice);
  EXPECT_EQ(api_.locate(d + kBytes, nullptr), MemoryLocation::kHost);
  EXPECT_EQ(api_.locate(d - 1, nullptr), MemoryLocation::kHost);
  EXPECT_EQ(d[0], 0);  // zero-filled, like the memfd pages behind it
  void* pinned = api_.pinnedAlloc(128);
  int onStack = 0;
  EXPECT_EQ(api_.locate(pinned, nullptr), MemoryLocation::kHost);
  EXPECT_EQ(api_.locate(&onStack, nullptr), MemoryLocation::kHost);
  EXPECT_EQ(api_.locate(nullptr, nullptr), MemoryLocation::kHost);
  api_.deviceFree(d);
  EXPECT_EQ(api_.locate(d, nullptr), MemoryLocation::kHost);
  api_.pinnedFree(pinned);
  EXPECT_EQ(api_.deviceAlloc(0), nullptr);
}

TEST_F(EmulatedDeviceApiTest, IpcHandleMapsTheSamePagesInAForkedProcess) {
  constexpr size_t kCount = 4096;
  auto* d = static_cast<uint32_t*>(api_.deviceAlloc(kCount * sizeof(uint32_t)));
  for (size_t i = 0; i < kCount; ++i) d[i] = static_cast<uint32_t>(i * 3);
  DeviceIpcHandle handle;
  api_.ipcExport(d, &handle);
  const pid_t child = fork();
  ASSERT_GE(child, 0) << std::strerror(errno);
  if (child == 0) {
    // The child checks what the parent wrote and writes its answer; exit codes say which step failed.
    int code = 0;
    try {
      EmulatedDeviceApi childApi;
      auto* mapped = static_cast<uint32_t*>(childApi.ipcOpen(handle));
      if (childApi.locate(mapped + 5, nullptr) != MemoryLocation::kDevice) code = 2;
      for (size_t i = 0; i < kCount && code == 0; ++i) {
        if (mapped[i] != i * 3) code = 3;
      }
      for (size_t i = 0; i < kCount; ++i) mapped[i] = static_cast<uint32_t>(i + 1000);
      childApi.ipcClose(mapped);
      if (childApi.locate(mapped, nullptr) != MemoryLocation::kHost) code = 4;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child: %s\n", e.what());
      code = 5;
    }
    _exit(code);
  }
  ASSERT_EQ(reap(child), 0);
  for (size_t i = 0; i < kCount; ++i) ASSERT_EQ(d[i], i + 1000) << "at " << i;
  api_.deviceFree(d);
}

TEST_F(EmulatedDeviceApiTest, IpcRefusesTheExportingProcessInteriorPointersAndFreedAllocations) {
  auto* d = static_cast<char*>(api_.deviceAlloc(4096));
  DeviceIpcHandle handle;
  api_.ipcExport(d, &handle);
  try {
    api_.ipcOpen(handle);
    ADD_FAILURE() << "opened in the exporting process";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), chorusUnhandledCudaError);
    EXPECT_NE(std::string(e.what()).find("exported by this process"), std::string::npos) << e.what();
  }
  EXPECT_THROW(api_.ipcExport(d + 16, &handle), Error);
  api_.deviceFree(d);
  // The handle outlived its allocation: a child must be told so, not map something else.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int code = 1;
    try {
      EmulatedDeviceApi childApi;
      childApi.ipcOpen(handle);
    } catch (const Error& e) {
      code = 0;
    } catch (...) {
      code = 2;
    }
    _exit(code);
  }
  EXPECT_EQ(reap(child), 0);
}

TEST_F(EmulatedDeviceApiTest, ForkedChildGetsItsOwnDefaultStreamAndRefusesTheParentsStreams) {
  DeviceStream parentStream = api_.createStream();
  int src = 5, dst = 0;
  api_.copyAsync(&dst, &src, sizeof(int), nullptr);  // the parent's default stream exists before the fork
  api_.synchronize(nullptr);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int code = 0;
    try {
      int a = 11, b = 0;
      api_.copyAsync(&b, &a, sizeof(int), nullptr);
      api_.synchronize(nullptr);
      if (b != 11) code = 2;
      try {
        api_.synchronize(parentStream);
        code = 3;
      } catch (const Error& e) {
        if (std::string(e.what()).find("before a fork") == std::string::npos) code = 4;
      }
    } catch (...) {
      code = 5;
    }
    _exit(code);
  }
  EXPECT_EQ(reap(child), 0);
  api_.destroyStream(parentStream);
}

TEST_F(EmulatedDeviceApiTest, BadHandlesAndDevicesAreRuntimeErrors) {
  int notAStream = 0;
  try {
    api_.synchronize(&notAStream);
    ADD_FAILURE() << "accepted a stream it did not create";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), chorusUnhandledCudaError);
  }
  EXPECT_THROW(api_.eventDone(&notAStream), Error);
  EXPECT_THROW(api_.setDevice(1), Error);
  EXPECT_NO_THROW(api_.setDevice(0));
  EXPECT_EQ(api_.currentDevice(), 0);
  int x = 0;
  EXPECT_THROW(api_.copyAsync(nullptr, &x, 4, nullptr), Error);
  EXPECT_THROW(api_.deviceFree(&x), Error);
}

TEST(DeviceApiChoiceTest, EmulationWhenTheKnobSaysSo) {
  std::optional<std::string> old;
  if (const char* v = std::getenv("CHORUS_DEVICE_EMULATION")) old = v;
  ::setenv("CHORUS_DEVICE_EMULATION", "1", 1);
  EXPECT_STREQ(deviceApi().name(), "emulated");
  EXPECT_TRUE(deviceApi().available());
  ::setenv("CHORUS_DEVICE_EMULATION", "0", 1);
  EXPECT_STREQ(deviceApi().name(), "cuda");
  ::setenv("CHORUS_DEVICE_EMULATION", "2", 1);
  EXPECT_THROW(deviceApi(), Error);
  if (old) {
    ::setenv("CHORUS_DEVICE_EMULATION", old->c_str(), 1);
  } else {
    ::unsetenv("CHORUS_DEVICE_EMULATION");
  }
}

}  // namespace
}  // namespace chorus
