// What runs on any machine, with or without a driver: argument checks of the CUDA reducer, the checked-call
// error text, and (where no device is usable) that detection says "host" and the reducer fails cleanly.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "reduce/cuda/cuda_reducer.h"
#include "core/error.h"
#include "core/cuda_error.h"
#include "core/device_runtime.h"
#include "device/memory_location.h"
#include "device/scoped_device.h"

namespace chorus {
namespace {

TEST(CudaWithoutDeviceTest, DetectionSaysHostAndReducerFailsCleanly) {
  if (cudaAvailable()) GTEST_SKIP() << "a CUDA device is usable here; this test is for machines without one";
  EXPECT_FALSE(cudaAvailable()) << "the answer is cached and stable";
  std::vector<float> heap(16, 1.0f);
  float stack = 2.0f;
  int device = -3;
  EXPECT_EQ(locateBuffer(heap.data(), &device), MemoryLocation::kHost);
  EXPECT_EQ(locateBuffer(&stack), MemoryLocation::kHost);
  EXPECT_EQ(locateBuffer(nullptr), MemoryLocation::kHost);
  EXPECT_EQ(device, -3);
  try {
    cudaReducer().reduce(heap.data(), heap.data(), heap.data(), heap.size(), chorusFloat32, chorusSum);
    FAIL() << "reduce without a device did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), chorusUnhandledCudaError) << e.what();
    EXPECT_NE(std::string(e.what()).find("float32"), std::string::npos) << e.what();
  }
  EXPECT_THROW(cudaReducer().finishAverage(heap.data(), heap.size(), chorusFloat32, 2), Error);
  EXPECT_EQ(heap[0], 1.0f) << "nothing was touched";
  try {
    ScopedCudaDevice onDevice(0, "rank 1 allreduce");
    FAIL() << "choosing a device without a driver did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), chorusUnhandledCudaError) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("rank 1 allreduce", 0), 0u) << e.what();
  }
  ScopedCudaDevice nothing(-1, "host buffers");  // a negative device asks for nothing, and gets it
  // Nothing to do is not an error, device or not.
  cudaReducer().reduce(nullptr, nullptr, nullptr, 0, chorusFloat32, chorusSum);
  cudaReducer().finishAverage(heap.data(), heap.size(), chorusFloat32, 1);
}

TEST(CudaErrorTest, CheckedCallNamesContextCallAndRuntimeText) {
  try {
    CHORUS_CUDA_CHECK(std::string("rank 3 allreduce"), cudaErrorInvalidValue);
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), chorusUnhandledCudaError);
    EXPECT_EQ(std::string(e.what()), std::string("rank 3 allreduce: cudaErrorInvalidValue failed: ") +
                                         cudaGetErrorString(cudaErrorInvalidValue));
  }
  int evaluated = 0;
  CHORUS_CUDA_CHECK((++evaluated, std::string("unused")), cudaSuccess);
  EXPECT_EQ(evaluated, 0) << "the context is built only on failure";
}

TEST(CudaReducerArgumentsTest, RejectsWhatTheHostReducerRejects) {
  float x = 1.0f;
  CudaReducer reducer;
  auto expectInvalid = [](auto&& call, const char* what) {
    try {
      call();
      ADD_FAILURE() << what << ": no exception";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), chorusInvalidArgument) << what << ": " << e.what();
    }
  };
  expectInvalid([&] { reducer.reduce(&x, &x, &x, 1, static_cast<chorusDataType_t>(chorusNumTypes), chorusSum); },
                "bad type");
  expectInvalid([&] { reducer.reduce(&x, &x, &x, 1, chorusFloat32, static_cast<chorusRedOp_t>(chorusNumOps)); },
                "bad op");
  expectInvalid([&] { reducer.reduce(nullptr, &x, &x, 1, chorusFloat32, chorusSum); }, "null dst");
  expectInvalid([&] { reducer.reduce(&x, &x, nullptr, 1, chorusFloat32, chorusSum); }, "null b");
  expectInvalid([&] { reducer.finishAverage(&x, 1, chorusFloat32, 0); }, "zero ranks");
  expectInvalid([&] { reducer.finishAverage(nullptr, 1, chorusFloat32, 2); }, "null data");
  EXPECT_EQ(x, 1.0f);
}

TEST(CudaReducerArgumentsTest, EachThreadHasItsOwnReducer) {
  CudaReducer* here = &cudaReducer();
  CudaReducer* there = nullptr;
  std::thread([&] { there = &cudaReducer(); }).join();
  EXPECT_NE(here, there);
  EXPECT_EQ(here, &cudaReducer());
  auto* stream = reinterpret_cast<CUstream_st*>(0x1000);
  here->setStream(stream);
  EXPECT_EQ(cudaReducer().stream(), stream);
  here->setStream(nullptr);
}

}  // namespace
}  // namespace chorus
