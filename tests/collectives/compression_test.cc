// CHORUS_COMPRESSION held to its promises, at 2-16 ranks, for every allreduce algorithm and the selector's choice,
// with adversarial inputs (mixed signs, magnitudes 2^-20..2^20): every rank ends with the same bits, and the error
// against the exact sum is within docs/compression.md's bound, (H + 1) * u * sum_r |x_r| with H <= ranks - 1 the
// compressed hops on a value's longest path and u the format's unit roundoff (2^-8 bfloat16, 2^-11 float16), plus
// float32's own rounding; float16 adds (H + 1) * 2^-38 * M, M the largest magnitude in a message (its scale keeps 2^29
// of range in normal numbers: smaller values of the same message lose bits, and may differ across ranks by their
// rounding). Values exact at 16 bits stay exact. Links are compressed with ":all" (threads share one host).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "tests/harness/build_tree.h"
#include "tests/harness/process_world.h"
#include "tests/harness/thread_world.h"

namespace chorus::test {
namespace {

using namespace std::chrono_literals;

constexpr size_t kCount = 5003;  // odd, several slices of 4 KiB

// Rank r's input element i: deterministic, mixed signs, magnitudes over 40 binary orders.
float input(int r, size_t i) {
  uint32_t h = static_cast<uint32_t>(r * 2654435761u) ^ static_cast<uint32_t>(i * 40503u + 17);
  h ^= h >> 13;
  h *= 0x5bd1e995u;
  h ^= h >> 15;
  const int exponent = static_cast<int>(h % 41) - 20;
  const float mantissa = 1.0f + static_cast<float>((h >> 8) & 0xffff) / 65536.0f;
  return ((h >> 7) & 1 ? -1.0f : 1.0f) * std::ldexp(mantissa, exponent);
}

// (ranks, CHORUS_COMPRESSION, CHORUS_ALGO)
class CompressionTest : public ::testing::TestWithParam<std::tuple<int, std::string, std::string>> {};

TEST_P(CompressionTest, RanksAgreeAndErrorsStayWithinTheBound) {
  const auto& [n, format, algo] = GetParam();
  const bool bf16 = format.rfind("bf16", 0) == 0;
  const double u = bf16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);
  // The largest magnitude any message can hold: an input, or a sum of n of them (all below 2^21).
  const double range = bf16 ? 0.0 : std::ldexp(1.0, -38) * n * std::ldexp(1.0, 21);
  const double tiny = std::ldexp(1.0, -28) * n * std::ldexp(1.0, 21);
  Config config{.timeoutSeconds = 60, .chunkSize = 4096, .compression = format};
  if (!algo.empty()) config.algo = algo;
  ThreadWorld world(n, 60s, config);
  ASSERT_TRUE(world.ready());
  std::vector<std::vector<float>> sums(n), gathered(n), broadcast(n), integers(n);
  std::vector<std::vector<float>> scattered(n);
  ASSERT_TRUE(world.run(
      [&](chorusComm_t comm, int r) {
        std::vector<float> x(kCount);
        for (size_t i = 0; i < kCount; ++i) x[i] = input(r, i);
        sums[r].resize(kCount);
        ASSERT_EQ(chorusAllReduce(x.data(), sums[r].data(), kCount, chorusFloat32, chorusSum, comm, nullptr),
                  chorusSuccess);
        gathered[r].resize(kCount * n);
        ASSERT_EQ(chorusAllGather(x.data(), gathered[r].data(), kCount, chorusFloat32, comm, nullptr), chorusSuccess);
        broadcast[r] = x;
        ASSERT_EQ(
            chorusBroadcast(broadcast[r].data(), broadcast[r].data(), kCount, chorusFloat32, n - 1, comm, nullptr),
            chorusSuccess);
        std::vector<float> all(kCount * n);
        for (size_t i = 0; i < all.size(); ++i) all[i] = input(r, i);
        scattered[r].resize(kCount);
        ASSERT_EQ(chorusReduceScatter(all.data(), scattered[r].data(), kCount, chorusFloat32, chorusSum, comm, nullptr),
                  chorusSuccess);
        integers[r].assign(kCount, static_cast<float>(r % 4));  // sums below 64: exact at 16 bits
        ASSERT_EQ(
            chorusAllReduce(integers[r].data(), integers[r].data(), kCount, chorusFloat32, chorusSum, comm, nullptr),
            chorusSuccess);
      },
      120s));
  int wrong = 0;
  const double bound = (n + 1) * u + n * std::ldexp(1.0, -23);
  for (size_t i = 0; i < kCount && wrong < 5; ++i) {
    double exact = 0, magnitude = 0;
    for (int r = 0; r < n; ++r) {
      exact += input(r, i);
      magnitude += std::fabs(input(r, i));
    }
    for (int r = 0; r < n; ++r) {
      // float16: values below the message's normal range (2^-28 of its largest) may differ by their rounding.
      auto differ = [&](float a, float b) {
        return std::memcmp(&a, &b, sizeof(float)) != 0 && (bf16 || std::fabs(a) > tiny);
      };
      if (differ(sums[r][i], sums[0][i]))
        ++wrong, ADD_FAILURE() << "allreduce: ranks 0 and " << r << " differ at " << i;
      if (differ(broadcast[r][i], broadcast[0][i]))
        ++wrong, ADD_FAILURE() << "broadcast: ranks 0 and " << r << " differ at " << i;
      for (int b = 0; b < n; ++b) {
        const size_t k = static_cast<size_t>(b) * kCount + i;
        if (differ(gathered[r][k], gathered[0][k]))
          ++wrong, ADD_FAILURE() << "allgather: ranks 0 and " << r << " differ at " << k;
      }
      EXPECT_EQ(integers[r][i], static_cast<float>((n / 4) * 6 + (n % 4) * (n % 4 - 1) / 2)) << i;
    }
    const double error = std::fabs(sums[0][i] - exact);
    if (error > bound * magnitude + (n + 1) * range) {
      ++wrong;
      ADD_FAILURE() << "allreduce element " << i << ": " << sums[0][i] << " vs exact " << exact << ", error "
                    << error / magnitude << " of sum |x| > bound " << bound;
    }
    const double x = input(n - 1, i);
    if (std::fabs(broadcast[0][i] - x) > u * std::fabs(x) + range) ++wrong, ADD_FAILURE() << "broadcast element " << i;
    for (int b = 0; b < n; ++b) {
      const double mine = input(b, i);
      if (std::fabs(gathered[0][static_cast<size_t>(b) * kCount + i] - mine) > u * std::fabs(mine) + range) {
        ++wrong, ADD_FAILURE() << "allgather block " << b << " element " << i;
      }
    }
    for (int r = 0; r < n; ++r) {  // rank r's block of the reduce-scatter
      const size_t k = static_cast<size_t>(r) * kCount + i;
      double blockExact = 0, blockMagnitude = 0;
      for (int s = 0; s < n; ++s) {
        blockExact += input(s, k);
        blockMagnitude += std::fabs(input(s, k));
      }
      if (std::fabs(scattered[r][i] - blockExact) > bound * blockMagnitude + (n + 1) * range) {
        ++wrong, ADD_FAILURE() << "reduce-scatter rank " << r << " element " << i;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Formats, CompressionTest,
    ::testing::Combine(::testing::Values(2, 3, 5, 8, 16), ::testing::Values("bf16:all", "fp16:all"),
                       ::testing::Values("", "ring", "tree", "halving_doubling", "recursive_doubling")),
    [](const auto& info) {
      std::string format = std::get<1>(info.param).substr(0, 4);
      std::string algo = std::get<2>(info.param).empty() ? "default" : std::get<2>(info.param);
      return std::to_string(std::get<0>(info.param)) + "ranks_" + format + "_" + algo;
    });

// Processes on emulated hosts: TCP links compressed, shared-memory ones not (the world the agreement pass is for).
// (ranks, hosts, CHORUS_COMPRESSION, CHORUS_ALGO)
class CompressionAcrossHostsTest
    : public ::testing::TestWithParam<std::tuple<int, std::string, std::string, std::string>> {};

TEST_P(CompressionAcrossHostsTest, RanksAgreeAndErrorsStayWithinTheBound) {
  const auto& [n, hosts, format, algo] = GetParam();
  ProcessWorldOptions o;
  o.nranks = n;
  o.worker = buildTreePath("tests/chorus_compression_worker");
  o.env = {{"CHORUS_TIMEOUT", "60"},
           {"CHORUS_TEST_HOSTS", hosts},
           {"CHORUS_COMPRESSION", format},
           {"CHORUS_ALGO", algo},
           {"CHORUS_CHUNK_SIZE", "65536"}};
  o.deadline = 120s;
  ProcessWorldResult result = runProcessWorld(o);
  EXPECT_TRUE(result.allSucceeded()) << result.describe();
  for (int r = 0; r < n; ++r) {
    EXPECT_NE(result.ranks[r].output.find("compression right"), std::string::npos) << result.ranks[r].output;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Worlds, CompressionAcrossHostsTest,
    ::testing::Values(std::make_tuple(4, "2", "bf16", ""), std::make_tuple(4, "2", "fp16", "ring"),
                      std::make_tuple(5, "2", "bf16", "hierarchical"), std::make_tuple(6, "3/rr", "bf16", "ring"),
                      std::make_tuple(3, "3", "fp16", ""), std::make_tuple(4, "2", "bf16", "halving_doubling")),
    [](const auto& info) {
      std::string hosts = std::get<1>(info.param);
      for (char& c : hosts) c = c == '/' ? '_' : c;
      const std::string algo = std::get<3>(info.param).empty() ? "default" : std::get<3>(info.param);
      return std::to_string(std::get<0>(info.param)) + "ranks_" + hosts + "hosts_" + std::get<2>(info.param) + "_" +
             algo;
    });

}  // namespace
}  // namespace chorus::test
