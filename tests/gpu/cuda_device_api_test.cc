// The CUDA DeviceApi on a real GPU: streams run in order, flag waits (cuStreamWaitValue32 or the polling kernel)
// hold a stream and not the host, events report completion, memory is located, the per-stream reducer sees what
// the stream copied, and an IPC handle maps the same device memory in another process. Skips without a device.
#include "device/cuda_device_api.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

#include "device/poll_backoff.h"
#include "device/stream_flag.h"
#include "tests/gpu/gpu_test_support.h"
#include "tests/harness/build_tree.h"
#include "tests/harness/process_world.h"

namespace chorus {
namespace {

using Clock = std::chrono::steady_clock;

::testing::AssertionResult eventuallyDone(DeviceApi& api, DeviceEvent e) {
  const auto until = Clock::now() + std::chrono::seconds(30);
  PollBackoff backoff;
  while (!api.eventDone(e)) {
    if (Clock::now() > until) return ::testing::AssertionFailure() << "event not done within 30 s";
    backoff.pause();
  }
  return ::testing::AssertionSuccess();
}

TEST(CudaDeviceApiTest, StreamOrderFlagWaitsAndEvents) {
  CHORUS_REQUIRE_CUDA_DEVICE();
  DeviceApi& api = cudaDeviceApi();
  ASSERT_TRUE(api.available());
  constexpr size_t kCount = 1 << 20;
  DeviceStream s = api.createStream(), other = api.createStream();
  auto* flag = static_cast<uint32_t*>(api.pinnedAlloc(64));
  *flag = 0;
  auto* host = static_cast<int*>(api.pinnedAlloc(kCount * sizeof(int)));
  auto* back = static_cast<int*>(api.pinnedAlloc(kCount * sizeof(int)));
  std::iota(host, host + kCount, 3);
  std::fill(back, back + kCount, 0);
  void* a = api.deviceAlloc(kCount * sizeof(int));
  void* b = api.deviceAlloc(kCount * sizeof(int));
  DeviceEvent copied = api.createEvent(), done = api.createEvent();
  api.streamWaitFlag(s, flag, 1);  // returns at once
  api.copyAsync(a, host, kCount * sizeof(int), s);
  api.recordEvent(copied, s);
  api.streamWaitEvent(other, copied);
  api.copyAsync(b, a, kCount * sizeof(int), other);
  api.copyAsync(back, b, kCount * sizeof(int), other);
  api.recordEvent(done, other);
  EXPECT_FALSE(api.eventDone(copied)) << "the copy ran past an unraised flag";
  EXPECT_FALSE(api.eventDone(done));
  EXPECT_EQ(back[0], 0);
  raiseStreamFlag(api, flag, 1);
  ASSERT_TRUE(eventuallyDone(api, done));
  for (size_t i = 0; i < kCount; i += 4099) ASSERT_EQ(back[i], static_cast<int>(i + 3)) << "at " << i;
  int device = -1;
  EXPECT_EQ(api.locate(static_cast<char*>(a) + 100, &device), MemoryLocation::kDevice);
  EXPECT_EQ(device, api.currentDevice());
  EXPECT_EQ(api.locate(host, nullptr), MemoryLocation::kHost);
  api.destroyEvent(copied);
  api.destroyEvent(done);
  api.deviceFree(a);
  api.deviceFree(b);
  api.pinnedFree(host);
  api.pinnedFree(back);
  api.pinnedFree(flag);
  api.destroyStream(s);
  api.destroyStream(other);
}

TEST(CudaDeviceApiTest, ReducerRunsAfterTheStreamsCopies) {
  CHORUS_REQUIRE_CUDA_DEVICE();
  DeviceApi& api = cudaDeviceApi();
  DeviceStream s = api.createStream();
  constexpr size_t kCount = 4096;
  auto* host = static_cast<float*>(api.pinnedAlloc(kCount * sizeof(float)));
  std::fill(host, host + kCount, 1.25f);
  auto* x = static_cast<float*>(api.deviceAlloc(kCount * sizeof(float)));
  auto* y = static_cast<float*>(api.deviceAlloc(kCount * sizeof(float)));
  api.copyAsync(x, host, kCount * sizeof(float), s);
  api.copyAsync(y, host, kCount * sizeof(float), s);
  api.reducer(s).reduce(x, x, y, kCount, chorusFloat32, chorusSum);
  api.copyAsync(host, x, kCount * sizeof(float), s);
  api.synchronize(s);
  for (size_t i = 0; i < kCount; ++i) ASSERT_EQ(host[i], 2.5f) << "at " << i;
  api.deviceFree(x);
  api.deviceFree(y);
  api.pinnedFree(host);
  api.destroyStream(s);
}

std::string hex(const DeviceIpcHandle& h) {
  std::string out;
  char byte[3];
  for (unsigned char c : h.bytes) {
    std::snprintf(byte, sizeof(byte), "%02x", c);
    out += byte;
  }
  return out;
}

DeviceIpcHandle unhex(const std::string& text) {
  DeviceIpcHandle h{};
  for (size_t i = 0; i < sizeof(h.bytes) && 2 * i + 1 < text.size(); ++i) {
    h.bytes[i] = static_cast<unsigned char>(std::stoi(text.substr(2 * i, 2), nullptr, 16));
  }
  return h;
}

constexpr size_t kIpcCount = 1 << 18;

// CUDA cannot be used in a fork of a process that has initialized it: the other process is this binary again.
TEST(CudaDeviceApiTest, IpcHandleMapsTheSameMemoryInAnotherProcess) {
  CHORUS_REQUIRE_CUDA_DEVICE();
  DeviceApi& api = cudaDeviceApi();
  DeviceStream s = api.createStream();
  auto* host = static_cast<uint32_t*>(api.pinnedAlloc(kIpcCount * sizeof(uint32_t)));
  for (size_t i = 0; i < kIpcCount; ++i) host[i] = static_cast<uint32_t>(i * 7);
  void* d = api.deviceAlloc(kIpcCount * sizeof(uint32_t));
  api.copyAsync(d, host, kIpcCount * sizeof(uint32_t), s);
  api.synchronize(s);
  DeviceIpcHandle handle;
  api.ipcExport(d, &handle);
  test::ProcessWorldOptions o;
  o.nranks = 1;
  o.worker = test::selfExecutable();
  o.args = {"--gtest_filter=CudaDeviceApiWorker.DISABLED_OpenIpcHandle", "--gtest_also_run_disabled_tests"};
  o.env = {{"CHORUS_TEST_IPC_HANDLE", hex(handle)}};
  o.deadline = std::chrono::seconds(120);
  const test::ProcessWorldResult r = test::runProcessWorld(o);
  ASSERT_TRUE(r.allSucceeded()) << r.describe();
  api.copyAsync(host, d, kIpcCount * sizeof(uint32_t), s);
  api.synchronize(s);
  for (size_t i = 0; i < kIpcCount; i += 997) ASSERT_EQ(host[i], i + 5) << "the other process's write at " << i;
  api.deviceFree(d);
  api.pinnedFree(host);
  api.destroyStream(s);
}

// The other process of the test above: checks what the exporter wrote, writes i + 5.
TEST(CudaDeviceApiWorker, DISABLED_OpenIpcHandle) {
  const char* text = std::getenv("CHORUS_TEST_IPC_HANDLE");
  ASSERT_NE(text, nullptr);
  DeviceApi& api = cudaDeviceApi();
  ASSERT_TRUE(api.available());
  void* d = api.ipcOpen(unhex(text));
  EXPECT_EQ(api.locate(d, nullptr), MemoryLocation::kDevice);
  DeviceStream s = api.createStream();
  auto* host = static_cast<uint32_t*>(api.pinnedAlloc(kIpcCount * sizeof(uint32_t)));
  api.copyAsync(host, d, kIpcCount * sizeof(uint32_t), s);
  api.synchronize(s);
  for (size_t i = 0; i < kIpcCount; i += 997) ASSERT_EQ(host[i], i * 7) << "at " << i;
  for (size_t i = 0; i < kIpcCount; ++i) host[i] = static_cast<uint32_t>(i + 5);
  api.copyAsync(d, host, kIpcCount * sizeof(uint32_t), s);
  api.synchronize(s);
  api.ipcClose(d);
  api.pinnedFree(host);
  api.destroyStream(s);
}

TEST(CudaDeviceApiTest, UnavailableWithoutADeviceAndSaysWhy) {
  if (cudaAvailable()) GTEST_SKIP() << "a device is present; this checks the behaviour without one";
  DeviceApi& api = cudaDeviceApi();
  EXPECT_FALSE(api.available());
  int x = 0;
  EXPECT_EQ(api.locate(&x, nullptr), MemoryLocation::kHost);
}

}  // namespace
}  // namespace chorus
