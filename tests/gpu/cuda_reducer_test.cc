// The CUDA reduction kernels against the host reducer, bit for bit (NaN payloads aside): every datatype x op,
// counts around the 16-byte vector and the grid, every pointer at its own misalignment, aliasing, byte-misaligned
// pointers, every float16/bfloat16 bit pattern, and the synchronous contract of reduce().
#include "reduce/cuda/cuda_reducer.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <vector>

#include "reduce/reducer.h"
#include "core/datatype.h"
#include "tests/gpu/gpu_test_support.h"

namespace chorus {
namespace {

using gpu_test::DeviceBuffer;
using gpu_test::firstMismatch;
using gpu_test::hexElement;
using gpu_test::kAllOps;
using gpu_test::kAllTypes;
using gpu_test::randomElements;

using gpu_test::kCounts;
using gpu_test::kMaxOffset;
using gpu_test::offsetTriples;
constexpr size_t kLargest = gpu_test::kLargestCount;

// The bytes of elements [offset, offset + count) of `all`.
const unsigned char* at(const std::vector<unsigned char>& all, size_t offset, chorusDataType_t type) {
  return all.data() + offset * typeSize(type);
}

TEST(CudaReducerTest, EveryTypeAndOpMatchesHostReducer) {
  CHORUS_REQUIRE_CUDA_DEVICE();
  std::mt19937_64 rng(20240601);
  CudaReducer reducer;
  for (chorusDataType_t type : kAllTypes) {
    const size_t size = typeSize(type);
    const size_t capacity = (kLargest + kMaxOffset) * size;
    DeviceBuffer dst(capacity, 0), a(capacity, 0), b(capacity, 0);
    ASSERT_TRUE(dst.ok() && a.ok() && b.ok());
    // Uploaded once: device element i of a and b is element i of hostA and hostB, so each offset sees different
    // data, and a kernel reading the wrong element cannot pass by luck.
    const std::vector<unsigned char> hostA = randomElements(type, kLargest + kMaxOffset, rng);
    const std::vector<unsigned char> hostB = randomElements(type, kLargest + kMaxOffset, rng);
    a.upload(hostA.data(), hostA.size());
    b.upload(hostB.data(), hostB.size());
    for (chorusRedOp_t op : kAllOps) {
      for (size_t count : kCounts) {
        for (const auto& [od, oa, ob] : offsetTriples(count)) {
          const size_t bytes = count * size;
          std::vector<unsigned char> expected(bytes + 1);
          hostReducer().reduce(expected.data(), at(hostA, oa, type), at(hostB, ob, type), count, type, op);
          dst.fillPattern();
          auto* d = static_cast<unsigned char*>(dst.data()) + od * size;
          const auto* x = static_cast<const unsigned char*>(a.data()) + oa * size;
          const auto* y = static_cast<const unsigned char*>(b.data()) + ob * size;
          ASSERT_NO_THROW(reducer.reduce(d, x, y, count, type, op));
          // The result, the bytes before it and up to 64 bytes after it (the full guards are checked per type).
          const size_t end = (od + count) * size;
          const std::vector<unsigned char> region = dst.download(std::min(capacity, end + 64));
          const unsigned char* actual = region.data() + od * size;
          const size_t bad = firstMismatch(type, expected.data(), actual, count);
          ASSERT_EQ(bad, count) << typeName(type) << " " << opName(op) << " count " << count << " offsets " << od << ","
                                << oa << "," << ob << ": element " << bad << " is " << hexElement(type, actual, bad)
                                << ", expected " << hexElement(type, expected.data(), bad) << " (inputs "
                                << hexElement(type, at(hostA, oa, type), bad) << ", "
                                << hexElement(type, at(hostB, ob, type), bad) << ")";
          for (size_t i = 0; i < region.size(); ++i) {
            if (i >= od * size && i < end) continue;
            ASSERT_EQ(region[i], DeviceBuffer::kPattern)
                << typeName(type) << " " << opName(op) << " count " << count << " offsets " << od << "," << oa << ","
                << ob << ": wrote byte " << i << " outside dst";
          }
        }
      }
    }
    ASSERT_TRUE(dst.guardsIntact((kLargest + kMaxOffset) * size)) << typeName(type);
  }
}

// How dst, a and b share buffers: dst == a, dst == b, a == b (dst apart), dst == a == b.
enum class Alias { kDstIsA, kDstIsB, kSameInputs, kAllSame };

TEST(CudaReducerTest, AliasedBuffersMatchHostReducer) {
  CHORUS_REQUIRE_CUDA_DEVICE();
  std::mt19937_64 rng(7);
  CudaReducer reducer;
  for (chorusDataType_t type : kAllTypes) {
    const size_t size = typeSize(type);
    for (chorusRedOp_t op : kAllOps) {
      for (size_t count : {size_t{1}, size_t{17}, size_t{1023}, size_t{100003}}) {
        for (size_t offset : {size_t{0}, size_t{1}, size_t{8}}) {
          for (Alias alias : {Alias::kDstIsA, Alias::kDstIsB, Alias::kSameInputs, Alias::kAllSame}) {
            const size_t bytes = count * size;
            std::vector<unsigned char> hostA = randomElements(type, count, rng);
            std::vector<unsigned char> hostB = randomElements(type, count, rng);
            const bool sameInputs = alias == Alias::kSameInputs || alias == Alias::kAllSame;
            std::vector<unsigned char> expected(bytes + 1);
            hostReducer().reduce(expected.data(), hostA.data(), sameInputs ? hostA.data() : hostB.data(), count, type,
                                 op);
            DeviceBuffer a(bytes, offset * size), b(bytes, offset * size), separate(bytes, offset * size);
            ASSERT_TRUE(a.ok() && b.ok() && separate.ok());
            a.upload(hostA.data(), bytes);
            b.upload(hostB.data(), bytes);
            void* second = sameInputs ? a.data() : b.data();
            DeviceBuffer* out = alias == Alias::kDstIsA || alias == Alias::kAllSame ? &a
                                : alias == Alias::kDstIsB                           ? &b
                                                                                    : &separate;
            ASSERT_NO_THROW(reducer.reduce(out->data(), a.data(), second, count, type, op));
            const std::vector<unsigned char> actual = out->download(bytes);
            const size_t bad = firstMismatch(type, expected.data(), actual.data(), count);
            ASSERT_EQ(bad, count) << typeName(type) << " " << opName(op) << " count " << count << " alias "
                                  << static_cast<int>(alias) << " offset " << offset << ": element " << bad << " is "
                                  << hexElement(type, actual.data(), bad) << ", expected "
                                  << hexElement(type, expected.data(), bad);
            ASSERT_TRUE(out->guardsIntact(bytes)) << typeName(type) << " alias " << static_cast<int>(alias);
          }
        }
      }
    }
  }
}

// Pointers not even aligned to their element size take the byte path, and still match.
TEST(CudaReducerTest, ByteMisalignedBuffersMatchHostReducer) {
  CHORUS_REQUIRE_CUDA_DEVICE();
  std::mt19937_64 rng(11);
  CudaReducer reducer;
  for (chorusDataType_t type :
       {chorusInt32, chorusUint64, chorusFloat16, chorusBfloat16, chorusFloat32, chorusFloat64}) {
    const size_t size = typeSize(type);
    for (chorusRedOp_t op : kAllOps) {
      for (size_t count : {size_t{1}, size_t{33}, size_t{4097}, size_t{300001}}) {
        const size_t bytes = count * size;
        const std::vector<unsigned char> hostA = randomElements(type, count, rng);
        const std::vector<unsigned char> hostB = randomElements(type, count, rng);
        std::vector<unsigned char> expected(bytes);
        hostReducer().reduce(expected.data(), hostA.data(), hostB.data(), count, type, op);
        DeviceBuffer a(bytes, 1), b(bytes, 3), d(bytes, 5);
        ASSERT_TRUE(a.ok() && b.ok() && d.ok());
        a.upload(hostA.data(), bytes);
        b.upload(hostB.data(), bytes);
        ASSERT_NO_THROW(reducer.reduce(d.data(), a.data(), b.data(), count, type, op));
        const std::vector<unsigned char> actual = d.download(bytes);
        const size_t bad = firstMismatch(type, expected.data(), actual.data(), count);
        ASSERT_EQ(bad, count) << typeName(type) << " " << opName(op) << " count " << count << ": element " << bad
                              << " is " << hexElement(type, actual.data(), bad) << ", expected "
                              << hexElement(type, expected.data(), bad);
        ASSERT_TRUE(d.guardsIntact(bytes)) << typeName(type);
      }
    }
  }
}

// Every float16 and bfloat16 bit pattern meets three partners (a permutation of all patterns, a small normal, a
// subnormal) under every op: the conversions and the rounding must agree with the host's everywhere.
TEST(CudaReducerTest, EverySixteenBitPatternMatchesHostReducer) {
  CHORUS_REQUIRE_CUDA_DEVICE();
  constexpr size_t kPatterns = 65536;
  CudaReducer reducer;
  for (chorusDataType_t type : {chorusFloat16, chorusBfloat16}) {
    std::vector<uint16_t> all(kPatterns);
    for (size_t i = 0; i < kPatterns; ++i) all[i] = static_cast<uint16_t>(i);
    const uint16_t oneAndABit = type == chorusFloat16 ? 0x3c01 : 0x3f81;
    for (int partner = 0; partner < 3; ++partner) {
      std::vector<uint16_t> other(kPatterns);
      for (size_t i = 0; i < kPatterns; ++i) {
        other[i] = partner == 0   ? static_cast<uint16_t>(i * 40503u + 12345u)
                   : partner == 1 ? static_cast<uint16_t>(oneAndABit ^ (i & 0x8000))
                                  : static_cast<uint16_t>(0x0001 | (i & 0x8000));
      }
      DeviceBuffer a(kPatterns * 2, 0), b(kPatterns * 2, 0), d(kPatterns * 2, 0);
      ASSERT_TRUE(a.ok() && b.ok() && d.ok());
      a.upload(all.data(), kPatterns * 2);
      b.upload(other.data(), kPatterns * 2);
      for (chorusRedOp_t op : kAllOps) {
        std::vector<uint16_t> expected(kPatterns);
        hostReducer().reduce(expected.data(), all.data(), other.data(), kPatterns, type, op);
        ASSERT_NO_THROW(reducer.reduce(d.data(), a.data(), b.data(), kPatterns, type, op));
        const std::vector<unsigned char> actual = d.download(kPatterns * 2);
        const size_t bad = firstMismatch(type, expected.data(), actual.data(), kPatterns);
        ASSERT_EQ(bad, kPatterns) << typeName(type) << " " << opName(op) << " partner " << partner << ": "
                                  << hexElement(type, all.data(), bad) << " op " << hexElement(type, other.data(), bad)
                                  << " gave " << hexElement(type, actual.data(), bad) << ", expected "
                                  << hexElement(type, expected.data(), bad);
      }
    }
  }
}

// reduce() returns only once the result is in memory: a copy on another, non-blocking stream sees it at once.
TEST(CudaReducerTest, ReduceWaitsForItsStream) {
  CHORUS_REQUIRE_CUDA_DEVICE();
  constexpr size_t kCount = size_t{1} << 24;  // 64 MiB of float32: long enough that a missing wait would show
  cudaStream_t work = nullptr, reader = nullptr;
  CHORUS_ASSERT_CUDA(cudaStreamCreateWithFlags(&work, cudaStreamNonBlocking));
  CHORUS_ASSERT_CUDA(cudaStreamCreateWithFlags(&reader, cudaStreamNonBlocking));
  std::vector<float> ones(kCount, 1.0f), twos(kCount, 2.0f);
  DeviceBuffer a(kCount * 4, 0), b(kCount * 4, 0);
  ASSERT_TRUE(a.ok() && b.ok());
  a.upload(ones.data(), kCount * 4);
  b.upload(twos.data(), kCount * 4);
  // The uploads ran on the legacy default stream, which non-blocking streams do not wait for.
  CHORUS_ASSERT_CUDA(cudaDeviceSynchronize());
  CudaReducer reducer(work);
  EXPECT_EQ(reducer.stream(), work);
  for (int round = 0; round < 3; ++round) {
    reducer.reduce(a.data(), a.data(), b.data(), kCount, chorusFloat32, chorusSum);  // a = 1 + 2(round + 1)
    std::vector<float> seen(kCount);
    CHORUS_ASSERT_CUDA(cudaMemcpyAsync(seen.data(), a.data(), kCount * 4, cudaMemcpyDeviceToHost, reader));
    CHORUS_ASSERT_CUDA(cudaStreamSynchronize(reader));
    const float want = 1.0f + 2.0f * static_cast<float>(round + 1);
    for (size_t i = 0; i < kCount; i += 4099) ASSERT_EQ(seen[i], want) << "element " << i << " round " << round;
    ASSERT_EQ(seen[kCount - 1], want) << "round " << round;
  }
  // The async variants enqueue; synchronize() waits.
  reducer.reduceAsync(a.data(), a.data(), b.data(), kCount, chorusFloat32, chorusSum);
  reducer.finishAverageAsync(a.data(), kCount, chorusFloat32, 3);
  reducer.synchronize();
  std::vector<float> seen(kCount);
  CHORUS_ASSERT_CUDA(cudaMemcpy(seen.data(), a.data(), kCount * 4, cudaMemcpyDeviceToHost));
  EXPECT_EQ(seen[0], 9.0f / 3.0f);
  EXPECT_EQ(seen[kCount - 1], 9.0f / 3.0f);
  CHORUS_ASSERT_CUDA(cudaStreamDestroy(work));
  CHORUS_ASSERT_CUDA(cudaStreamDestroy(reader));
}

// Managed memory is "device" to the detection, so the CUDA reducer must handle it too.
TEST(CudaReducerTest, ManagedMemoryReduces) {
  CHORUS_REQUIRE_CUDA_DEVICE();
  constexpr size_t kCount = 100003;
  double* a = nullptr;
  double* b = nullptr;
  CHORUS_ASSERT_CUDA(cudaMallocManaged(reinterpret_cast<void**>(&a), kCount * sizeof(double)));
  CHORUS_ASSERT_CUDA(cudaMallocManaged(reinterpret_cast<void**>(&b), kCount * sizeof(double)));
  for (size_t i = 0; i < kCount; ++i) a[i] = static_cast<double>(i), b[i] = 0.5;
  cudaReducer().reduce(a, a, b, kCount, chorusFloat64, chorusProd);
  for (size_t i = 0; i < kCount; ++i) ASSERT_EQ(a[i], static_cast<double>(i) * 0.5) << i;
  CHORUS_ASSERT_CUDA(cudaFree(a));
  CHORUS_ASSERT_CUDA(cudaFree(b));
}

}  // namespace
}  // namespace chorus
