// CUDA reduction kernel bandwidth against the device's own copy bandwidth, measured in the same run.
//
// For float32, float16 and bfloat16 sum, at 64 MiB to 1 GiB per buffer, out of place (d = a + b) and in place
// (a = a + b, what the collectives do): the kernel's GB/s counts two reads and one write per element, the copy's
// (cudaMemcpyAsync device to device) one read and one write; "ratio" is kernel / copy, the target is >= 0.90. The
// kernels are timed back to back on one stream with events (reduceAsync); "sync GB/s" is the synchronous
// reduce() the algorithms call, launch and cudaStreamSynchronize included. Each figure is the best of 3 trials.
//
//   chorus-reduce-bench-gpu              # every size
//   chorus-reduce-bench-gpu 64 256       # only these sizes, in MiB
// Without a CUDA device it says so and exits 0.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "reduce/cuda/cuda_reducer.h"
#include "core/datatype.h"
#include "core/error.h"
#include "core/device_runtime.h"

namespace chorus {
namespace {

constexpr int kTrials = 3;
constexpr size_t kTimedBytesPerTrial = size_t{16} << 30;  // enough back-to-back work to hide event granularity

void check(cudaError_t error, const char* what) {
  if (error != cudaSuccess) {
    std::fprintf(stderr, "chorus-reduce-bench-gpu: %s failed: %s\n", what, cudaGetErrorString(error));
    std::exit(1);
  }
}

// Milliseconds for `iterations` runs of `body` on `stream`, best of kTrials (one untimed warm-up run first).
template <typename Body>
float bestMilliseconds(cudaStream_t stream, int iterations, Body body) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  body();
  check(cudaStreamSynchronize(stream), "warm-up");
  float best = 0;
  for (int trial = 0; trial < kTrials; ++trial) {
    check(cudaEventRecord(start, stream), "cudaEventRecord");
    for (int i = 0; i < iterations; ++i) body();
    check(cudaEventRecord(stop, stream), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    if (trial == 0 || ms < best) best = ms;
  }
  check(cudaEventDestroy(start), "cudaEventDestroy");
  check(cudaEventDestroy(stop), "cudaEventDestroy");
  return best;
}

double gigabytesPerSecond(double bytesPerIteration, int iterations, float milliseconds) {
  return bytesPerIteration * iterations / (static_cast<double>(milliseconds) * 1e-3) / 1e9;
}

int run(const std::vector<size_t>& mebibytes) {
  if (!cudaAvailable()) {
    int devices = 0;
    const cudaError_t error = cudaGetDeviceCount(&devices);
    std::printf("chorus-reduce-bench-gpu: no CUDA device (%s); nothing to measure\n",
                error != cudaSuccess ? cudaGetErrorString(error) : "the runtime sees none");
    return 0;
  }
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  cudaDeviceProp properties{};
  check(cudaGetDeviceProperties(&properties, device), "cudaGetDeviceProperties");
  int runtime = 0;
  check(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
  std::printf("# %s, %d SMs, CUDA runtime %d.%d\n", properties.name, properties.multiProcessorCount, runtime / 1000,
              (runtime % 1000) / 10);
  std::printf("%-9s %-4s %-8s %6s %12s %12s %7s %12s\n", "type", "op", "layout", "MiB", "kernel GB/s", "copy GB/s",
              "ratio", "sync GB/s");
  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  CudaReducer reducer(stream);
  for (size_t mib : mebibytes) {
    const size_t bytes = mib << 20;
    size_t freeBytes = 0, totalBytes = 0;
    check(cudaMemGetInfo(&freeBytes, &totalBytes), "cudaMemGetInfo");
    if (3 * bytes + (size_t{256} << 20) > freeBytes) {
      std::printf("# %zu MiB: skipped, three buffers do not fit in %zu MiB free\n", mib, freeBytes >> 20);
      continue;
    }
    void *a = nullptr, *b = nullptr, *d = nullptr;
    check(cudaMalloc(&a, bytes), "cudaMalloc");
    check(cudaMalloc(&b, bytes), "cudaMalloc");
    check(cudaMalloc(&d, bytes), "cudaMalloc");
    // 0x3c bytes are ordinary normal numbers in all three types (never subnormal or NaN).
    check(cudaMemset(a, 0x3c, bytes), "cudaMemset");
    check(cudaMemset(b, 0x3c, bytes), "cudaMemset");
    check(cudaMemset(d, 0x3c, bytes), "cudaMemset");
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    const int iterations = static_cast<int>(std::max<size_t>(4, kTimedBytesPerTrial / (3 * bytes)));
    const float copyMs = bestMilliseconds(stream, iterations, [&] {
      check(cudaMemcpyAsync(d, a, bytes, cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync");
    });
    const double copyGbs = gigabytesPerSecond(2.0 * bytes, iterations, copyMs);
    for (chorusDataType_t type : {chorusFloat32, chorusFloat16, chorusBfloat16}) {
      const size_t count = bytes / typeSize(type);
      for (bool inPlace : {false, true}) {
        void* out = inPlace ? a : d;
        const float kernelMs =
            bestMilliseconds(stream, iterations, [&] { reducer.reduceAsync(out, a, b, count, type, chorusSum); });
        const float syncMs =
            bestMilliseconds(stream, iterations, [&] { reducer.reduce(out, a, b, count, type, chorusSum); });
        const double kernelGbs = gigabytesPerSecond(3.0 * bytes, iterations, kernelMs);
        const double syncGbs = gigabytesPerSecond(3.0 * bytes, iterations, syncMs);
        std::printf("%-9s %-4s %-8s %6zu %12.1f %12.1f %7.3f %12.1f\n", typeName(type), "sum",
                    inPlace ? "inplace" : "separate", mib, kernelGbs, copyGbs, kernelGbs / copyGbs, syncGbs);
        std::fflush(stdout);
      }
    }
    check(cudaFree(a), "cudaFree");
    check(cudaFree(b), "cudaFree");
    check(cudaFree(d), "cudaFree");
  }
  check(cudaStreamDestroy(stream), "cudaStreamDestroy");
  return 0;
}

}  // namespace
}  // namespace chorus

int main(int argc, char** argv) {
  std::vector<size_t> mebibytes;
  for (int i = 1; i < argc; ++i) {
    char* end = nullptr;
    const unsigned long long mib = std::strtoull(argv[i], &end, 10);
    if (end == argv[i] || *end != '\0' || mib == 0) {
      std::fprintf(stderr, "usage: %s [MiB per buffer ...]   (default: 64 256 1024)\n", argv[0]);
      return 2;
    }
    mebibytes.push_back(static_cast<size_t>(mib));
  }
  if (mebibytes.empty()) mebibytes = {64, 256, 1024};
  try {
    return chorus::run(mebibytes);
  } catch (const chorus::Error& e) {
    std::fprintf(stderr, "chorus-reduce-bench-gpu: %s\n", e.what());
    return 1;
  }
}
