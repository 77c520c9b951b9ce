// Tensor fusion: a group's allreduces of one datatype and op are packed, reduced as one and unpacked; whatever the
// threshold (off, smaller than one call, a few calls, everything), every result must be what the calls one by one
// would give, with other collectives and point-to-point calls in the same group.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/collectives/suite_knobs.h"
#include "tests/harness/thread_world.h"

namespace chorus::test {
namespace {

class GroupFusionTest : public ::testing::TestWithParam<size_t> {};

TEST_P(GroupFusionTest, MixedGroupGivesTheUnfusedResults) {
  Config config = suiteConfig();
  config.fusionThreshold = GetParam();
  const int n = 3;
  runThreadWorld(
      n,
      [](chorusComm_t comm, int rank) {
        constexpr int kCalls = 64;
        std::vector<std::vector<float>> sums(kCalls);
        std::vector<std::vector<int32_t>> maxes(kCalls);
        std::vector<std::vector<int64_t>> ors(kCalls);
        std::vector<float> broadcast(777, rank == 1 ? 5.0f : -1.0f);
        std::vector<double> sent(300, rank), got(300, -1);
        ASSERT_EQ(chorusGroupStart(), chorusSuccess);
        for (int k = 0; k < kCalls; ++k) {
          const size_t count = 1000 + static_cast<size_t>(k) * 37;
          sums[k].assign(count, static_cast<float>(rank + k));
          maxes[k].assign(count / 2, rank * 10 + k);
          ors[k].assign(count / 3 + (k % 5 == 0 ? 0 : 1), int64_t{1} << (rank + k % 20));
          ASSERT_EQ(chorusAllReduce(sums[k].data(), sums[k].data(), count, chorusFloat32, chorusSum, comm, nullptr),
                    chorusSuccess);
          ASSERT_EQ(chorusAllReduce(maxes[k].data(), maxes[k].data(), maxes[k].size(), chorusInt32, chorusMax, comm,
                                    nullptr),
                    chorusSuccess);
          ASSERT_EQ(chorusAllReduce(ors[k].data(), ors[k].data(), ors[k].size(), chorusInt64, chorusBor, comm, nullptr),
                    chorusSuccess);
          if (k == kCalls / 2) {
            ASSERT_EQ(chorusBroadcast(broadcast.data(), broadcast.data(), broadcast.size(), chorusFloat32, 1, comm,
                                      nullptr),
                      chorusSuccess);
            ASSERT_EQ(chorusSend(sent.data(), sent.size(), chorusFloat64, (rank + 1) % n, comm, nullptr),
                      chorusSuccess);
            ASSERT_EQ(chorusRecv(got.data(), got.size(), chorusFloat64, (rank + n - 1) % n, comm, nullptr),
                      chorusSuccess);
          }
        }
        ASSERT_EQ(chorusGroupEnd(), chorusSuccess) << chorusGetLastError(comm);
        for (int k = 0; k < kCalls; ++k) {
          const float sum = static_cast<float>(0 + 1 + 2 + 3 * k);
          for (float v : sums[k]) ASSERT_EQ(v, sum) << "sum call " << k;
          for (int32_t v : maxes[k]) ASSERT_EQ(v, 20 + k) << "max call " << k;
          const int64_t bits = (int64_t{1} << (k % 20)) | (int64_t{1} << (1 + k % 20)) | (int64_t{1} << (2 + k % 20));
          for (int64_t v : ors[k]) ASSERT_EQ(v, bits) << "bor call " << k;
        }
        for (float v : broadcast) ASSERT_EQ(v, 5.0f);
        for (double v : got) ASSERT_EQ(v, static_cast<double>((rank + n - 1) % n));
      },
      std::chrono::seconds(120), config);
}

// Views of one flattened bucket (back to back) are reduced by one call over the bucket, with no packing; a slice
// whose output would overlap another's input is not taken for one.
TEST_P(GroupFusionTest, ContiguousSlicesOfOneBucket) {
  Config config = suiteConfig();
  config.fusionThreshold = GetParam();
  runThreadWorld(
      2,
      [](chorusComm_t comm, int rank) {
        constexpr size_t kSlices = 32, kSlice = 333;
        std::vector<double> bucket(kSlices * kSlice), out(kSlices * kSlice, -1.0);
        for (size_t i = 0; i < bucket.size(); ++i) bucket[i] = static_cast<double>(rank * 1000 + i % 1000);
        ASSERT_EQ(chorusGroupStart(), chorusSuccess);
        for (size_t k = 0; k < kSlices; ++k) {
          ASSERT_EQ(chorusAllReduce(bucket.data() + k * kSlice, out.data() + k * kSlice, kSlice, chorusFloat64,
                                    chorusSum, comm, nullptr),
                    chorusSuccess);
        }
        ASSERT_EQ(chorusGroupEnd(), chorusSuccess) << chorusGetLastError(comm);
        for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], static_cast<double>(1000 + 2 * (i % 1000))) << i;
        // In place, one bucket.
        ASSERT_EQ(chorusGroupStart(), chorusSuccess);
        for (size_t k = 0; k < kSlices; ++k) {
          double* p = bucket.data() + k * kSlice;
          ASSERT_EQ(chorusAllReduce(p, p, kSlice, chorusFloat64, chorusMax, comm, nullptr), chorusSuccess);
        }
        ASSERT_EQ(chorusGroupEnd(), chorusSuccess) << chorusGetLastError(comm);
        for (size_t i = 0; i < bucket.size(); ++i) ASSERT_EQ(bucket[i], static_cast<double>(1000 + i % 1000)) << i;
      },
      std::chrono::seconds(120), config);
}

INSTANTIATE_TEST_SUITE_P(Thresholds, GroupFusionTest,
                         ::testing::Values(size_t{0}, size_t{1000}, size_t{16} << 10, size_t{64} << 20),
                         [](const auto& info) { return "threshold_" + std::to_string(info.param); });

}  // namespace
}  // namespace chorus::test
