// CudaReducer::finishAverage against the host reducer's, bit for bit: every datatype, rank counts from 1 to 1000,
// the reduce tests' counts, element and byte misalignment.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "reduce/cuda/cuda_reducer.h"
#include "reduce/reducer.h"
#include "core/datatype.h"
#include "tests/gpu/gpu_test_support.h"

namespace chorus {
namespace {

using gpu_test::DeviceBuffer;
using gpu_test::firstMismatch;
using gpu_test::hexElement;
using gpu_test::kAllTypes;
using gpu_test::randomElements;

using gpu_test::kCounts;

// Offsets in bytes: whole elements (0, 1, 2, 4, 8 of them), then one byte off for the wider types.
std::vector<size_t> byteOffsets(size_t size) {
  std::vector<size_t> offsets;
  for (size_t elements : {0, 1, 2, 4, 8}) offsets.push_back(elements * size);
  if (size > 1) offsets.push_back(1);
  return offsets;
}

TEST(CudaAverageTest, MatchesHostReducer) {
  CHORUS_REQUIRE_CUDA_DEVICE();
  std::mt19937_64 rng(3);
  CudaReducer reducer;
  for (chorusDataType_t type : kAllTypes) {
    const size_t size = typeSize(type);
    for (int nranks : {1, 2, 3, 7, 1000}) {
      for (size_t count : kCounts) {
        const bool large = count > 100000;
        for (size_t offset : byteOffsets(size)) {
          if (large && offset != 0 && offset != 4 * size && offset != 1) continue;  // big cases: a few alignments
          const size_t bytes = count * size;
          std::vector<unsigned char> expected = randomElements(type, count, rng);
          DeviceBuffer data(bytes, offset);
          ASSERT_TRUE(data.ok());
          data.upload(expected.data(), bytes);
          hostReducer().finishAverage(expected.data(), count, type, nranks);
          ASSERT_NO_THROW(reducer.finishAverage(data.data(), count, type, nranks));
          const std::vector<unsigned char> actual = data.download(bytes);
          const size_t bad = firstMismatch(type, expected.data(), actual.data(), count);
          ASSERT_EQ(bad, count) << typeName(type) << " / " << nranks << " count " << count << " byte offset " << offset
                                << ": element " << bad << " is " << hexElement(type, actual.data(), bad)
                                << ", expected " << hexElement(type, expected.data(), bad);
          ASSERT_TRUE(data.guardsIntact(bytes)) << typeName(type) << " count " << count << " offset " << offset;
        }
      }
    }
  }
}

// The hand-picked cases of the host tests: truncation toward zero, the extremes, and rounding once in float.
TEST(CudaAverageTest, TruncatesIntegersAndRoundsHalvesOnce) {
  CHORUS_REQUIRE_CUDA_DEVICE();
  auto average = [](chorusDataType_t type, uint64_t bits, int nranks) {
    const size_t size = typeSize(type);
    constexpr size_t kCount = 37;  // head, vectors and tail
    std::vector<unsigned char> host(kCount * size);
    for (size_t i = 0; i < kCount; ++i) std::memcpy(host.data() + i * size, &bits, size);
    DeviceBuffer data(host.size(), 0);
    data.upload(host.data(), host.size());
    cudaReducer().finishAverage(data.data(), kCount, type, nranks);
    const std::vector<unsigned char> out = data.download(host.size());
    uint64_t first = 0;
    std::memcpy(&first, out.data(), size);
    for (size_t i = 1; i < kCount; ++i) EXPECT_EQ(std::memcmp(out.data(), out.data() + i * size, size), 0) << i;
    return first;
  };
  EXPECT_EQ(static_cast<int8_t>(average(chorusInt8, static_cast<uint8_t>(-7), 2)), -3);
  EXPECT_EQ(static_cast<int8_t>(average(chorusInt8, static_cast<uint8_t>(-128), 2)), -64);
  EXPECT_EQ(average(chorusUint8, 255, 2), 127u);
  EXPECT_EQ(static_cast<int32_t>(average(chorusInt32, static_cast<uint32_t>(INT32_MIN), 3)), -715827882);
  EXPECT_EQ(average(chorusUint32, 0xffffffffu, 2), 0x7fffffffu);
  EXPECT_EQ(static_cast<int64_t>(average(chorusInt64, static_cast<uint64_t>(INT64_MIN), 3)), INT64_MIN / 3);
  EXPECT_EQ(average(chorusUint64, ~uint64_t{0}, 3), ~uint64_t{0} / 3);
  EXPECT_EQ(average(chorusFloat16, 0x3c00, 3), floatToHalf(1.0f / 3.0f));
  EXPECT_EQ(average(chorusBfloat16, 0xc000, 3), floatToBfloat16(-2.0f / 3.0f));
}

}  // namespace
}  // namespace chorus
