// Shared pieces of the GPU tests: skipping without a device, device buffers with guard bytes, inputs full of edge
// cases, and element comparison that treats any two NaNs as equal (the GPU makes arithmetic NaNs canonical).
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "reduce/half.h"
#include "chorus/chorus.h"
#include "core/datatype.h"
#include "core/device_runtime.h"
#include "tests/harness/edge_floats.h"

namespace chorus::gpu_test {

// Why CUDA cannot be used here ("" when it can).
inline std::string noDeviceReason() {
  if (cudaAvailable()) return "";
  int devices = 0;
  const cudaError_t error = cudaGetDeviceCount(&devices);
  cudaGetLastError();
  return error != cudaSuccess ? cudaGetErrorString(error) : "the runtime sees no device";
}

// Skips the current test unless a CUDA device is usable.
#define CHORUS_REQUIRE_CUDA_DEVICE()                                              \
  do {                                                                            \
    if (!::chorus::cudaAvailable()) {                                             \
      GTEST_SKIP() << "no CUDA device: " << ::chorus::gpu_test::noDeviceReason(); \
    }                                                                             \
  } while (0)

// Fails the current test (fatally) when a CUDA call does not succeed.
#define CHORUS_ASSERT_CUDA(call) \
  ASSERT_EQ(cudaSuccess, (call)) << #call << ": " << cudaGetErrorString(cudaGetLastError())

// `bytes` of device memory (cudaMalloc) plus kGuard bytes on each side, all filled with kPattern; data() is
// `offset` bytes past a 256-byte aligned point, so tests choose the alignment of what they hand the kernels.
class DeviceBuffer {
 public:
  static constexpr size_t kGuard = 256;
  static constexpr unsigned char kPattern = 0xa5;

  DeviceBuffer(size_t capacity, size_t offset) : total_(capacity + offset + 2 * kGuard), offset_(offset) {
    if (cudaMalloc(&base_, total_) != cudaSuccess) {
      base_ = nullptr;
      ADD_FAILURE() << "cudaMalloc(" << total_ << ") failed: " << cudaGetErrorString(cudaGetLastError());
    }
    fillPattern();
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (base_ != nullptr) cudaFree(base_);
  }

  bool ok() const { return base_ != nullptr; }
  void* data() const { return static_cast<char*>(base_) + kGuard + offset_; }
  // Resets every byte (guards and data) to kPattern.
  void fillPattern() {
    if (base_ != nullptr) {
      EXPECT_EQ(cudaSuccess, cudaMemset(base_, kPattern, total_));
    }
  }
  void upload(const void* host, size_t bytes) {
    EXPECT_EQ(cudaSuccess, cudaMemcpy(data(), host, bytes, cudaMemcpyHostToDevice));
  }
  std::vector<unsigned char> download(size_t bytes) const {
    std::vector<unsigned char> out(bytes);
    EXPECT_EQ(cudaSuccess, cudaMemcpy(out.data(), data(), bytes, cudaMemcpyDeviceToHost));
    return out;
  }
  // Whether the bytes outside [data(), data() + bytes) still hold kPattern.
  bool guardsIntact(size_t bytes) const {
    std::vector<unsigned char> all(total_);
    if (cudaMemcpy(all.data(), base_, total_, cudaMemcpyDeviceToHost) != cudaSuccess) return false;
    const size_t begin = kGuard + offset_, end = begin + bytes;
    for (size_t i = 0; i < total_; ++i) {
      if ((i < begin || i >= end) && all[i] != kPattern) return false;
    }
    return true;
  }

 private:
  void* base_ = nullptr;
  size_t total_;
  size_t offset_;
};

inline bool isNanElement(chorusDataType_t type, const unsigned char* p) {
  switch (type) {
    case chorusFloat16:
    case chorusBfloat16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return std::isnan(type == chorusFloat16 ? halfToFloat(h) : bfloat16ToFloat(h));
    }
    case chorusFloat8e4m3:
      return (*p & 0x7f) == 0x7f;
    case chorusFloat8e5m2:
      return (*p & 0x7f) > 0x7c;
    case chorusFloat32: {
      float f;
      std::memcpy(&f, p, 4);
      return std::isnan(f);
    }
    case chorusFloat64: {
      double d;
      std::memcpy(&d, p, 8);
      return std::isnan(d);
    }
    default:
      return false;
  }
}

// Index of the first element where `actual` differs from `expected` (same bits, or NaN in both), or n.
inline size_t firstMismatch(chorusDataType_t type, const void* expected, const void* actual, size_t n) {
  const size_t size = typeSize(type);
  const auto* e = static_cast<const unsigned char*>(expected);
  const auto* a = static_cast<const unsigned char*>(actual);
  for (size_t i = 0; i < n; ++i) {
    const unsigned char* x = e + i * size;
    const unsigned char* y = a + i * size;
    if (std::memcmp(x, y, size) == 0) continue;
    if (isNanElement(type, x) && isNanElement(type, y)) continue;
    return i;
  }
  return n;
}

// Element i of p as hex, for failure messages.
inline std::string hexElement(chorusDataType_t type, const void* p, size_t i) {
  static const char* digits = "0123456789abcdef";
  const size_t size = typeSize(type);
  std::string s = "0x";
  for (size_t k = size; k-- > 0;) {
    const auto byte = static_cast<const unsigned char*>(p)[i * size + k];
    s += digits[byte >> 4];
    s += digits[byte & 15];
  }
  return s;
}

// n random elements of `type` as bytes: integers mostly full-range (wrap-around) with some small values (ties,
// signs); floating types a mix of ordinary values and edge cases (NaN, infinities, +-0, subnormals, any bits).
inline std::vector<unsigned char> randomElements(chorusDataType_t type, size_t n, std::mt19937_64& rng) {
  const size_t size = typeSize(type);
  std::vector<unsigned char> out(n * size);
  for (size_t i = 0; i < n; ++i) {
    unsigned char* p = out.data() + i * size;
    switch (type) {
      case chorusFloat32: {
        const float f = test::edgeOrOrdinaryFloat<float>(rng(), rng);
        std::memcpy(p, &f, 4);
        break;
      }
      case chorusFloat64: {
        const double d = test::edgeOrOrdinaryFloat<double>(rng(), rng);
        std::memcpy(p, &d, 8);
        break;
      }
      case chorusFloat16:
      case chorusBfloat16: {
        const uint64_t r = rng();
        const float f = test::edgeOrOrdinaryFloat<float>(rng(), rng);
        const uint16_t h =
            (r & 1) ? static_cast<uint16_t>(r >> 8) : (type == chorusFloat16 ? floatToHalf(f) : floatToBfloat16(f));
        std::memcpy(p, &h, 2);
        break;
      }
      default: {
        const uint64_t r = rng();
        const uint64_t bits = (i % 5 == 0) ? static_cast<uint64_t>(static_cast<int64_t>(r % 7) - 3) : r;
        std::memcpy(p, &bits, size);  // little-endian: the low bytes
        break;
      }
    }
  }
  return out;
}

// fp8's random elements are any bytes (the default case): every code, NaNs and e5m2 infinities included.
inline constexpr chorusDataType_t kAllTypes[] = {chorusInt8,    chorusUint8,   chorusInt32,      chorusUint32,
                                                 chorusInt64,   chorusUint64,  chorusFloat16,    chorusBfloat16,
                                                 chorusFloat32, chorusFloat64, chorusFloat8e4m3, chorusFloat8e5m2};
inline constexpr chorusRedOp_t kAllOps[] = {chorusSum, chorusProd, chorusMax, chorusMin, chorusAvg};

// Counts that matter to the kernels: none, one, under a vector, around 16 bytes, a block, and a large odd one
// (several grid-stride steps).
inline constexpr size_t kLargestCount = (size_t{1} << 20) + 5;
inline constexpr size_t kCounts[] = {0, 1, 3, 15, 16, 17, 1023, kLargestCount};
// Element offsets of dst, a and b from an aligned base.
inline constexpr size_t kElementOffsets[] = {0, 1, 2, 4, 8};
inline constexpr size_t kMaxOffset = 8;

// Offsets (in elements) of dst, a, b. Counts under largeFrom get every combination; larger ones, where each case
// moves tens of megabytes, get the equal ones (the vector path at each head length) and a few mixed ones.
inline std::vector<std::array<size_t, 3>> offsetTriples(size_t count, size_t largeFrom = kLargestCount) {
  std::vector<std::array<size_t, 3>> triples;
  if (count < largeFrom) {
    for (size_t d : kElementOffsets) {
      for (size_t a : kElementOffsets) {
        for (size_t b : kElementOffsets) triples.push_back({d, a, b});
      }
    }
  } else {
    for (size_t o : kElementOffsets) triples.push_back({o, o, o});
    triples.push_back({0, 1, 2});
    triples.push_back({8, 0, 4});
    triples.push_back({1, 8, 8});
  }
  return triples;
}

}  // namespace chorus::gpu_test
