// The CUDA kernels' per-thread code, run on the CPU for every (block, thread) of the grid the launcher would use,
// against the host reducer: the splitting into head, 16-byte vectors and tail, the grid-stride loop, the three
// access paths and the element operations, on any machine. (Exact: each element is read and written by one thread
// only, reads first, so the order in which threads run cannot matter.) What this cannot check, the instructions
// the device executes, the tests that run on a GPU do (cuda_reducer_test.cc, cuda_average_test.cc).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <vector>

#include "reduce/cuda/device_ops.h"
#include "reduce/cuda/reduce_thread_work.h"
#include "reduce/reducer.h"
#include "core/datatype.h"
#include "tests/gpu/gpu_test_support.h"

namespace chorus {
namespace {

using gpu_test::firstMismatch;
using gpu_test::hexElement;
using gpu_test::kAllOps;
using gpu_test::kAllTypes;
using gpu_test::randomElements;

// What launchReduceKernel does, with the launch replaced by a loop over the grid.
void emulateReduce(void* dst, const void* a, const void* b, size_t count, chorusDataType_t type, chorusRedOp_t op,
                   int multiprocessors) {
  if (count == 0) return;
  const bool known = device_ops::visitReduceOp(type, op == chorusAvg ? chorusSum : op, [&](auto tag) {
    using Op = typename decltype(tag)::type;
    const void* pointers[] = {dst, a, b};
    const reduce_work::Split split = reduce_work::splitFor<typename Op::Element>(count, pointers, 3);
    const auto blocks = static_cast<unsigned>(reduce_work::gridFor(split, count, multiprocessors));
    for (unsigned block = 0; block < blocks; ++block) {
      for (unsigned thread = 0; thread < reduce_work::kThreads; ++thread) {
        reduce_work::reduceAsThread<Op>(dst, a, b, count, split, block, blocks, thread);
      }
    }
  });
  ASSERT_TRUE(known) << typeName(type) << " " << opName(op);
}

void emulateAverage(void* data, size_t count, chorusDataType_t type, int nranks, int multiprocessors) {
  if (count == 0 || nranks == 1) return;
  const bool known = device_ops::visitDivideOp(type, [&](auto tag) {
    using Divide = typename decltype(tag)::type;
    const void* pointers[] = {data};
    const reduce_work::Split split = reduce_work::splitFor<typename Divide::Element>(count, pointers, 1);
    const auto blocks = static_cast<unsigned>(reduce_work::gridFor(split, count, multiprocessors));
    for (unsigned block = 0; block < blocks; ++block) {
      for (unsigned thread = 0; thread < reduce_work::kThreads; ++thread) {
        reduce_work::averageAsThread<Divide>(data, count, split, Divide::divisor(nranks), block, blocks, thread);
      }
    }
  });
  ASSERT_TRUE(known) << typeName(type);
}

// Host memory standing in for a device buffer: `bytes` at `offset` bytes past a 256-byte boundary, with guards.
class HostBuffer {
 public:
  static constexpr size_t kGuard = 64;
  static constexpr unsigned char kPattern = 0xa5;

  HostBuffer(size_t bytes, size_t offset) : bytes_(bytes), storage_(bytes + offset + 2 * kGuard + 256, kPattern) {
    const auto base = reinterpret_cast<uintptr_t>(storage_.data());
    data_ = storage_.data() + (256 - base % 256) % 256 + kGuard + offset;
  }
  unsigned char* data() { return data_; }
  bool guardsIntact() const {
    for (const unsigned char* p = storage_.data(); p < storage_.data() + storage_.size(); ++p) {
      if ((p < data_ || p >= data_ + bytes_) && *p != kPattern) return false;
    }
    return true;
  }

 private:
  size_t bytes_;
  std::vector<unsigned char> storage_;
  unsigned char* data_;
};

// The GPU tests' counts, except that the largest is 200003 rather than 2^20 + 5 here (the CPU emulates slowly):
// still several grid-stride steps on one multiprocessor for every type.
constexpr size_t kEmulatedCounts[] = {0, 1, 3, 15, 16, 17, 1023, 200003};
constexpr size_t kEmulatedLargeFrom = 100000;

TEST(CudaKernelEmulationTest, EveryTypeOpCountAndOffsetMatchesHostReducer) {
  std::mt19937_64 rng(1234);
  int round = 0;
  for (chorusDataType_t type : kAllTypes) {
    const size_t size = typeSize(type);
    for (size_t count : kEmulatedCounts) {
      const std::vector<unsigned char> hostA = randomElements(type, count, rng);
      const std::vector<unsigned char> hostB = randomElements(type, count, rng);
      for (chorusRedOp_t op : kAllOps) {
        std::vector<unsigned char> expected(count * size + 1);
        hostReducer().reduce(expected.data(), hostA.data(), hostB.data(), count, type, op);
        for (const auto& [od, oa, ob] : gpu_test::offsetTriples(count, kEmulatedLargeFrom)) {
          const size_t bytes = count * size;
          HostBuffer d(bytes, od * size), a(bytes, oa * size), b(bytes, ob * size);
          std::copy(hostA.begin(), hostA.end(), a.data());
          std::copy(hostB.begin(), hostB.end(), b.data());
          // One multiprocessor: few blocks, many grid-stride steps; 132 (an H100): one step.
          const int multiprocessors = (++round % 2) ? 1 : 132;
          emulateReduce(d.data(), a.data(), b.data(), count, type, op, multiprocessors);
          const size_t bad = firstMismatch(type, expected.data(), d.data(), count);
          ASSERT_EQ(bad, count) << typeName(type) << " " << opName(op) << " count " << count << " offsets " << od << ","
                                << oa << "," << ob << " on " << multiprocessors << " SMs: element " << bad << " is "
                                << hexElement(type, d.data(), bad) << ", expected "
                                << hexElement(type, expected.data(), bad);
          ASSERT_TRUE(d.guardsIntact() && a.guardsIntact() && b.guardsIntact())
              << typeName(type) << " " << opName(op) << " count " << count << ": wrote outside dst";
        }
      }
    }
  }
}

// fp8 exhaustively: every pair of the 256 x 256 codes through each op, and every code averaged, give the host
// reducer's bytes (NaN for NaN), which tests/unit/fp8_reduce_test.cc checks against an independent reference.
TEST(CudaKernelEmulationTest, Fp8EveryPairMatchesHostReducer) {
  std::vector<unsigned char> a(65536), b(65536);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<unsigned char>(i >> 8);
    b[i] = static_cast<unsigned char>(i & 0xff);
  }
  for (chorusDataType_t type : {chorusFloat8e4m3, chorusFloat8e5m2}) {
    for (chorusRedOp_t op : kAllOps) {
      std::vector<unsigned char> expected(a.size()), got(a.size());
      hostReducer().reduce(expected.data(), a.data(), b.data(), a.size(), type, op);
      emulateReduce(got.data(), a.data(), b.data(), a.size(), type, op, 132);
      const size_t bad = firstMismatch(type, expected.data(), got.data(), a.size());
      ASSERT_EQ(bad, a.size()) << typeName(type) << " " << opName(op) << ": " << hexElement(type, a.data(), bad)
                               << " op " << hexElement(type, b.data(), bad) << " = "
                               << hexElement(type, got.data(), bad) << ", expected "
                               << hexElement(type, expected.data(), bad);
    }
    for (int nranks : {2, 3, 7}) {
      std::vector<unsigned char> expected(b.begin(), b.begin() + 256), got = expected;
      hostReducer().finishAverage(expected.data(), expected.size(), type, nranks);
      emulateAverage(got.data(), got.size(), type, nranks, 1);
      const size_t bad = firstMismatch(type, expected.data(), got.data(), got.size());
      ASSERT_EQ(bad, got.size()) << typeName(type) << " average over " << nranks << ": element " << bad;
    }
  }
}

// In place (dst == a, dst == b, all three the same): the kernels read each element before writing it.
TEST(CudaKernelEmulationTest, InPlaceMatchesHostReducer) {
  std::mt19937_64 rng(99);
  for (chorusDataType_t type : kAllTypes) {
    const size_t size = typeSize(type);
    for (chorusRedOp_t op : kAllOps) {
      for (size_t count : {size_t{17}, size_t{1023}, size_t{70001}}) {
        for (int alias = 0; alias < 3; ++alias) {
          std::vector<unsigned char> hostA = randomElements(type, count, rng);
          const std::vector<unsigned char> hostB = alias == 2 ? hostA : randomElements(type, count, rng);
          std::vector<unsigned char> expected(count * size);
          hostReducer().reduce(expected.data(), hostA.data(), hostB.data(), count, type, op);
          HostBuffer a(count * size, size), b(count * size, size);
          std::copy(hostA.begin(), hostA.end(), a.data());
          std::copy(hostB.begin(), hostB.end(), b.data());
          unsigned char* dst = alias == 1 ? b.data() : a.data();
          emulateReduce(dst, a.data(), alias == 2 ? a.data() : b.data(), count, type, op, 2);
          const size_t bad = firstMismatch(type, expected.data(), dst, count);
          ASSERT_EQ(bad, count) << typeName(type) << " " << opName(op) << " count " << count << " alias " << alias
                                << ": element " << bad;
        }
      }
    }
  }
}

TEST(CudaKernelEmulationTest, ByteMisalignedMatchesHostReducer) {
  std::mt19937_64 rng(5);
  for (chorusDataType_t type : kAllTypes) {
    const size_t size = typeSize(type);
    for (chorusRedOp_t op : kAllOps) {
      for (size_t count : {size_t{1}, size_t{33}, size_t{4097}}) {
        const std::vector<unsigned char> hostA = randomElements(type, count, rng);
        const std::vector<unsigned char> hostB = randomElements(type, count, rng);
        std::vector<unsigned char> expected(count * size);
        hostReducer().reduce(expected.data(), hostA.data(), hostB.data(), count, type, op);
        HostBuffer d(count * size, 5), a(count * size, 1), b(count * size, 3);
        std::copy(hostA.begin(), hostA.end(), a.data());
        std::copy(hostB.begin(), hostB.end(), b.data());
        emulateReduce(d.data(), a.data(), b.data(), count, type, op, 3);
        ASSERT_EQ(firstMismatch(type, expected.data(), d.data(), count), count)
            << typeName(type) << " " << opName(op) << " count " << count;
        ASSERT_TRUE(d.guardsIntact()) << typeName(type);
      }
    }
  }
}

TEST(CudaKernelEmulationTest, AverageMatchesHostReducer) {
  std::mt19937_64 rng(17);
  for (chorusDataType_t type : kAllTypes) {
    const size_t size = typeSize(type);
    for (int nranks : {1, 2, 3, 7, 1000}) {
      for (size_t count : kEmulatedCounts) {
        if (count > 100000 && nranks != 3) continue;
        for (size_t offset : {size_t{0}, size, 2 * size, 4 * size, 8 * size, size_t{1}}) {
          std::vector<unsigned char> expected = randomElements(type, count, rng);
          HostBuffer data(count * size, offset);
          std::copy(expected.begin(), expected.end(), data.data());
          hostReducer().finishAverage(expected.data(), count, type, nranks);
          emulateAverage(data.data(), count, type, nranks, offset % 2 ? 1 : 132);
          const size_t bad = firstMismatch(type, expected.data(), data.data(), count);
          ASSERT_EQ(bad, count) << typeName(type) << " / " << nranks << " count " << count << " byte offset " << offset
                                << ": element " << bad << " is " << hexElement(type, data.data(), bad) << ", expected "
                                << hexElement(type, expected.data(), bad);
          ASSERT_TRUE(data.guardsIntact()) << typeName(type) << " count " << count;
        }
      }
    }
  }
}

// The split itself: head up to the 16-byte boundary, whole vectors, and the path each pointer layout takes.
TEST(CudaKernelEmulationTest, SplitFollowsAlignment) {
  alignas(16) static float buffer[64];
  const void* aligned[] = {buffer, buffer + 4, buffer + 8};
  auto split = reduce_work::splitFor<float>(37, aligned, 3);
  EXPECT_EQ(split.path, reduce_work::Path::kVector);
  EXPECT_EQ(split.head, 0u);
  EXPECT_EQ(split.vectors, 9u);  // 36 elements, 1 in the tail
  const void* shifted[] = {buffer + 1, buffer + 5, buffer + 9};
  split = reduce_work::splitFor<float>(37, shifted, 3);
  EXPECT_EQ(split.path, reduce_work::Path::kVector);
  EXPECT_EQ(split.head, 3u);
  EXPECT_EQ(split.vectors, 8u);
  split = reduce_work::splitFor<float>(2, shifted, 3);
  EXPECT_EQ(split.head, 2u) << "a head longer than the count is cut to it";
  EXPECT_EQ(split.vectors, 0u);
  const void* mixed[] = {buffer, buffer + 1, buffer + 4};
  EXPECT_EQ(reduce_work::splitFor<float>(37, mixed, 3).path, reduce_work::Path::kElement);
  const void* odd[] = {buffer, reinterpret_cast<const char*>(buffer) + 2, buffer};
  EXPECT_EQ(reduce_work::splitFor<float>(37, odd, 3).path, reduce_work::Path::kByte);
  EXPECT_EQ(reduce_work::splitFor<uint16_t>(37, odd, 3).path, reduce_work::Path::kElement);
}

}  // namespace
}  // namespace chorus
