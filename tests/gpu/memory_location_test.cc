// locateBuffer on every kind of memory a caller can hand Chorus: host (heap, stack, registered, pinned), device,
// managed, interior pointers, NULL; and ScopedCudaDevice, which moves a thread to the buffers' device and back.
#include "device/memory_location.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "core/error.h"
#include "device/scoped_device.h"
#include "tests/gpu/gpu_test_support.h"

namespace chorus {
namespace {

TEST(MemoryLocationTest, HostMemoryIsHost) {
  CHORUS_REQUIRE_CUDA_DEVICE();
  std::vector<float> heap(1000);
  int stack = 0;
  int device = -7;
  EXPECT_EQ(locateBuffer(heap.data(), &device), MemoryLocation::kHost);
  EXPECT_EQ(device, -7) << "the ordinal is written only for device memory";
  EXPECT_EQ(locateBuffer(heap.data() + 999), MemoryLocation::kHost);
  EXPECT_EQ(locateBuffer(&stack), MemoryLocation::kHost);
  EXPECT_EQ(locateBuffer(nullptr), MemoryLocation::kHost);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "a host pointer must leave no error behind";
}

TEST(MemoryLocationTest, DeviceMemoryIsDevice) {
  CHORUS_REQUIRE_CUDA_DEVICE();
  int current = -1;
  CHORUS_ASSERT_CUDA(cudaGetDevice(&current));
  void* p = nullptr;
  CHORUS_ASSERT_CUDA(cudaMalloc(&p, 1 << 20));
  int device = -1;
  EXPECT_EQ(locateBuffer(p, &device), MemoryLocation::kDevice);
  EXPECT_EQ(device, current);
  EXPECT_EQ(locateBuffer(static_cast<char*>(p) + 12345), MemoryLocation::kDevice) << "an interior pointer";
  CHORUS_ASSERT_CUDA(cudaFree(p));
}

TEST(MemoryLocationTest, ManagedMemoryIsDevice) {
  CHORUS_REQUIRE_CUDA_DEVICE();
  void* p = nullptr;
  CHORUS_ASSERT_CUDA(cudaMallocManaged(&p, 1 << 20));
  static_cast<char*>(p)[100] = 1;  // pages touched on the host stay managed memory
  EXPECT_EQ(locateBuffer(p), MemoryLocation::kDevice);
  EXPECT_EQ(locateBuffer(static_cast<char*>(p) + 100), MemoryLocation::kDevice);
  CHORUS_ASSERT_CUDA(cudaFree(p));
}

TEST(MemoryLocationTest, PinnedAndRegisteredHostMemoryIsHost) {
  CHORUS_REQUIRE_CUDA_DEVICE();
  void* pinned = nullptr;
  CHORUS_ASSERT_CUDA(cudaMallocHost(&pinned, 1 << 20));
  EXPECT_EQ(locateBuffer(pinned), MemoryLocation::kHost);
  CHORUS_ASSERT_CUDA(cudaFreeHost(pinned));
  constexpr size_t kBytes = 1 << 20;
  char* registered = static_cast<char*>(std::aligned_alloc(4096, kBytes));
  ASSERT_NE(registered, nullptr);
  CHORUS_ASSERT_CUDA(cudaHostRegister(registered, kBytes, cudaHostRegisterDefault));
  EXPECT_EQ(locateBuffer(registered + 4096), MemoryLocation::kHost);
  CHORUS_ASSERT_CUDA(cudaHostUnregister(registered));
  std::free(registered);
}

// The guard moves the thread to the buffers' device and back; an impossible device is an error naming the caller.
TEST(ScopedCudaDeviceTest, SwitchesAndRestores) {
  CHORUS_REQUIRE_CUDA_DEVICE();
  int devices = 0, before = -1, inside = -1, after = -1;
  CHORUS_ASSERT_CUDA(cudaGetDeviceCount(&devices));
  CHORUS_ASSERT_CUDA(cudaGetDevice(&before));
  const int target = devices - 1;  // another device where there are several, the same one otherwise
  {
    ScopedCudaDevice guard(target, "test");
    CHORUS_ASSERT_CUDA(cudaGetDevice(&inside));
  }
  CHORUS_ASSERT_CUDA(cudaGetDevice(&after));
  EXPECT_EQ(inside, target);
  EXPECT_EQ(after, before);
  try {
    ScopedCudaDevice guard(devices + 5, "rank 2 broadcast");
    FAIL() << "device " << devices + 5 << " of " << devices << " was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), chorusUnhandledCudaError);
    EXPECT_NE(std::string(e.what()).find("rank 2 broadcast"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cudaSetDevice"), std::string::npos) << e.what();
  }
  cudaGetLastError();
  CHORUS_ASSERT_CUDA(cudaGetDevice(&after));
  EXPECT_EQ(after, before);
}

TEST(MemoryLocationTest, NamesAreStable) {
  EXPECT_STREQ(memoryLocationName(MemoryLocation::kHost), "host");
  EXPECT_STREQ(memoryLocationName(MemoryLocation::kDevice), "device");
}

}  // namespace
}  // namespace chorus
