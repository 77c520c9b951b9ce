#include "reduce/cuda/cuda_reducer.h"

#include <array>
#include <atomic>
#include <sstream>
#include <string>

#include "core/datatype.h"
#include "core/error.h"
#include "core/cuda_error.h"
#include "core/device_runtime.h"

#ifdef CHORUS_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "reduce/cuda/reduce_launch.h"
#endif

namespace chorus {
namespace {

std::string describe(const char* what, size_t count, chorusDataType_t type, chorusRedOp_t op, const void* stream) {
  std::ostringstream os;
  os << "CUDA " << what << " of " << count << " " << typeName(type) << " (" << static_cast<int>(type)
     << ") elements with op " << opName(op) << " (" << static_cast<int>(op) << ") on stream " << stream;
  return os.str();
}

void checkReduceArguments(const void* dst, const void* a, const void* b, size_t count, chorusDataType_t type,
                          chorusRedOp_t op, const void* stream) {
  if (!opSupportsType(op, type)) {
    throwInvalidArgument(describe("reduce", count, type, op, stream) + ": unsupported datatype or reduction op");
  }
  if (count != 0 && (dst == nullptr || a == nullptr || b == nullptr)) {
    throwInvalidArgument(describe("reduce", count, type, op, stream) + ": null buffer");
  }
}

void checkAverageArguments(const void* data, size_t count, chorusDataType_t type, int nranks, const void* stream) {
  if (!validType(type) || nranks < 1) {
    throwInvalidArgument(describe("finishAverage", count, type, chorusAvg, stream) + " over " + std::to_string(nranks) +
                         " ranks: unsupported datatype or rank count");
  }
  if (count != 0 && nranks != 1 && data == nullptr) {
    throwInvalidArgument(describe("finishAverage", count, type, chorusAvg, stream) + ": null buffer");
  }
}

#ifdef CHORUS_HAVE_CUDA
// Throws chorusUnhandledCudaError when there is no driver or device, before any call that would fail less clearly.
void requireCuda(const char* what, size_t count, chorusDataType_t type, chorusRedOp_t op, const void* stream) {
  if (!cudaAvailable()) {
    throw Error(chorusUnhandledCudaError,
                describe(what, count, type, op, stream) + ": CUDA is unavailable (no driver or no device)");
  }
}

// The current device's multiprocessor count, which sizes the grid; asked once per device.
int currentMultiprocessors(const char* what, size_t count, chorusDataType_t type, chorusRedOp_t op,
                           const void* stream) {
  constexpr int kCachedDevices = 64;
  static std::array<std::atomic<int>, kCachedDevices> cached{};
  int device = 0;
  CHORUS_CUDA_CHECK(describe(what, count, type, op, stream), cudaGetDevice(&device));
  if (device >= 0 && device < kCachedDevices) {
    const int known = cached[device].load(std::memory_order_relaxed);
    if (known > 0) return known;
  }
  int multiprocessors = 0;
  CHORUS_CUDA_CHECK(describe(what, count, type, op, stream) + " on device " + std::to_string(device),
                    cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device));
  if (device >= 0 && device < kCachedDevices) cached[device].store(multiprocessors, std::memory_order_relaxed);
  return multiprocessors;
}
#else
[[noreturn]] void throwNoCuda(const char* what, size_t count, chorusDataType_t type, chorusRedOp_t op,
                              const void* stream) {
  throw Error(chorusUnhandledCudaError,
              describe(what, count, type, op, stream) + ": this build of Chorus has no CUDA support");
}
#endif

}  // namespace

void CudaReducer::reduceAsync(void* dst, const void* a, const void* b, size_t count, chorusDataType_t type,
                              chorusRedOp_t op) {
  checkReduceArguments(dst, a, b, count, type, op, stream_);
  if (count == 0) return;
#ifdef CHORUS_HAVE_CUDA
  requireCuda("reduce", count, type, op, stream_);
  const int multiprocessors = currentMultiprocessors("reduce", count, type, op, stream_);
  // Average sums here; the algorithm divides once at the end (finishAverage).
  const chorusRedOp_t kernelOp = op == chorusAvg ? chorusSum : op;
  CHORUS_CUDA_CHECK(describe("reduce", count, type, op, stream_),
                    launchReduceKernel(dst, a, b, count, type, kernelOp, stream_, multiprocessors));
#else
  throwNoCuda("reduce", count, type, op, stream_);
#endif
}

void CudaReducer::finishAverageAsync(void* data, size_t count, chorusDataType_t type, int nranks) {
  checkAverageArguments(data, count, type, nranks, stream_);
  if (count == 0 || nranks == 1) return;
#ifdef CHORUS_HAVE_CUDA
  requireCuda("finishAverage", count, type, chorusAvg, stream_);
  const int multiprocessors = currentMultiprocessors("finishAverage", count, type, chorusAvg, stream_);
  CHORUS_CUDA_CHECK(
      describe("finishAverage", count, type, chorusAvg, stream_) + " over " + std::to_string(nranks) + " ranks",
      launchAverageKernel(data, count, type, nranks, stream_, multiprocessors));
#else
  throwNoCuda("finishAverage", count, type, chorusAvg, stream_);
#endif
}

void CudaReducer::synchronize() {
#ifdef CHORUS_HAVE_CUDA
  const cudaError_t error = cudaStreamSynchronize(stream_);
  if (error != cudaSuccess) {
    std::ostringstream context;
    context << "CUDA reducer waiting for stream " << static_cast<const void*>(stream_);
    throwCudaError(context.str(), "cudaStreamSynchronize", error);
  }
#endif
}

void CudaReducer::reduce(void* dst, const void* a, const void* b, size_t count, chorusDataType_t type,
                         chorusRedOp_t op) {
  reduceAsync(dst, a, b, count, type, op);
  if (count != 0) synchronize();
}

void CudaReducer::finishAverage(void* data, size_t count, chorusDataType_t type, int nranks) {
  finishAverageAsync(data, count, type, nranks);
  if (count != 0 && nranks != 1) synchronize();
}

CudaReducer& cudaReducer() {
  thread_local CudaReducer reducer;
  return reducer;
}

}  // namespace chorus
