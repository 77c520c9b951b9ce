// CHORUS_AUTOTUNE on real worlds: while the ranks try candidates they must try the same ones at the same calls
// (any disagreement fails a call or its results), the results stay right through the trials, the tuned table is
// written by rank 0 at destroy and read back by the next communicator, and CHORUS_ALGO rules are never overridden.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/harness/thread_world.h"

namespace chorus::test {
namespace {

using namespace std::chrono_literals;

constexpr int kCalls = 40;  // more than the tuner's 32 per size

std::string readFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Every rank: kCalls allreduces of each size and kCalls broadcasts, each result checked.
void tunedCalls(chorusComm_t comm, int r, int n) {
  for (size_t count : {size_t{3000}, size_t{20000}}) {  // 12 KB and 80 KB: two sizes, slices of 16 KiB
    std::vector<float> x(count);
    for (int call = 0; call < kCalls; ++call) {
      for (size_t i = 0; i < count; ++i) x[i] = static_cast<float>((r + 1) * (call + 1) + i % 7);
      ASSERT_EQ(chorusAllReduce(x.data(), x.data(), count, chorusFloat32, chorusSum, comm, nullptr), chorusSuccess);
      const float base = static_cast<float>(n * (n + 1) / 2 * (call + 1));
      ASSERT_EQ(x[0], base) << "call " << call;
      ASSERT_EQ(x[count - 1], base + static_cast<float>(n * ((count - 1) % 7))) << "call " << call;
    }
  }
  std::vector<int32_t> b(30000);
  for (int call = 0; call < kCalls; ++call) {
    for (size_t i = 0; i < b.size(); ++i) b[i] = r == 1 ? static_cast<int32_t>(call * 100000 + i) : -1;
    ASSERT_EQ(chorusBroadcast(b.data(), b.data(), b.size(), chorusInt32, 1, comm, nullptr), chorusSuccess);
    ASSERT_EQ(b[b.size() - 1], static_cast<int32_t>(call * 100000 + b.size() - 1)) << "call " << call;
  }
}

class AutotuneTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("chorus-autotune-" + std::to_string(::getpid()) + "-" + std::to_string(GetParam()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_P(AutotuneTest, RanksTryAlikeAndTheTableIsWrittenAndReadBack) {
  const int n = GetParam();
  const std::string file = (dir_ / "table").string();
  Config config{.timeoutSeconds = 60, .chunkSize = 16384, .autotune = true, .autotuneFile = file};
  runThreadWorld(n, [n](chorusComm_t comm, int r) { tunedCalls(comm, r, n); }, 120s, config);
  const std::string table = readFile(file);
  EXPECT_NE(table.find("allreduce.32:8K-16K="), std::string::npos) << table;
  EXPECT_NE(table.find("64K-128K="), std::string::npos) << table;
  EXPECT_NE(table.find("broadcast.32:64K-128K="), std::string::npos) << table;
  EXPECT_FALSE(std::filesystem::exists(file + ".tmp"));
  // The next communicator starts from the table: every size it covers is settled, so it writes the same table.
  runThreadWorld(n, [n](chorusComm_t comm, int r) { tunedCalls(comm, r, n); }, 120s, config);
  EXPECT_EQ(readFile(file), table);
}

TEST_P(AutotuneTest, ForcedRulesAreNeverOverridden) {
  const int n = GetParam();
  const std::string file = (dir_ / "forced").string();
  Config config{.timeoutSeconds = 60, .algo = "allreduce:ring", .chunkSize = 16384, .autotune = true,
                .autotuneFile = file};
  runThreadWorld(n, [n](chorusComm_t comm, int r) { tunedCalls(comm, r, n); }, 120s, config);
  const std::string table = readFile(file);
  EXPECT_EQ(table.find("allreduce"), std::string::npos) << table;
  EXPECT_NE(table.find("broadcast.32:"), std::string::npos) << table;
}

// Over TCP every pair opens four sockets and the tuner tries striping over 1, 2 and 4 at sizes that stripe: the
// ranks must try them alike (a pair that disagreed would fail the call as a mismatch), and results stay right.
TEST(AutotuneSocketsTest, RanksTrySocketsAlikeOverTcp) {
  Config config{.timeoutSeconds = 60, .transports = "tcp", .autotune = true};
  runThreadWorld(3, [](chorusComm_t comm, int r) {
    std::vector<float> x(size_t{1} << 18);  // 1 MiB
    for (int call = 0; call < kCalls; ++call) {
      std::fill(x.begin(), x.end(), static_cast<float>(r + call));
      ASSERT_EQ(chorusAllReduce(x.data(), x.data(), x.size(), chorusFloat32, chorusSum, comm, nullptr), chorusSuccess);
      ASSERT_EQ(x.back(), static_cast<float>(3 + 3 * call)) << "call " << call;
    }
  }, 120s, config);
}

// Groups of 40 allreduces of 64 KiB (2.5 MiB in all) with a 2 MiB threshold: the tuner fuses them at 2 MiB, 256
// KiB and 32 KiB and not at all, three times each, and keeps one; every rank must fuse alike (ranks that did not
// would call different collectives and fail), and every result stays right.
TEST_P(AutotuneTest, GroupsTryFusionThresholdsAlike) {
  const int n = GetParam();
  Config config{.timeoutSeconds = 60, .fusionThreshold = size_t{2} << 20, .autotune = true};
  runThreadWorld(n, [n](chorusComm_t comm, int r) {
    constexpr size_t kTensors = 40, kCount = 16384;
    std::vector<std::vector<float>> grads(kTensors, std::vector<float>(kCount));
    for (int step = 0; step < 15; ++step) {
      for (size_t t = 0; t < kTensors; ++t) std::fill(grads[t].begin(), grads[t].end(), static_cast<float>(r + t));
      ASSERT_EQ(chorusGroupStart(), chorusSuccess);
      for (auto& g : grads) {
        ASSERT_EQ(chorusAllReduce(g.data(), g.data(), kCount, chorusFloat32, chorusSum, comm, nullptr), chorusSuccess);
      }
      ASSERT_EQ(chorusGroupEnd(), chorusSuccess);
      for (size_t t = 0; t < kTensors; ++t) {
        ASSERT_EQ(grads[t].back(), static_cast<float>(n * (n - 1) / 2 + n * static_cast<int>(t))) << "step " << step;
      }
    }
  }, 120s, config);
}

TEST(AutotuneFileTest, ATableThatDoesNotParseFailsTheInitNamingTheFile) {
  const std::string file =
      (std::filesystem::temp_directory_path() / ("chorus-autotune-bad-" + std::to_string(::getpid()))).string();
  std::ofstream(file) << "allreduce.32:0-64K=no_such_algorithm\n";
  chorusUniqueId id{};
  ASSERT_EQ(chorusGetUniqueId(&id), chorusSuccess);
  Config config{.timeoutSeconds = 20, .autotune = true, .autotuneFile = file};
  const chorusConfig_t c = config.toC();
  chorusComm_t comm = nullptr;
  EXPECT_EQ(chorusCommInitRankConfig(&comm, 1, id, 0, const_cast<chorusConfig_t*>(&c)), chorusInvalidArgument);
  const std::string error = chorusGetLastError(nullptr);
  EXPECT_NE(error.find("CHORUS_AUTOTUNE_FILE=" + file), std::string::npos) << error;
  EXPECT_NE(error.find("no_such_algorithm"), std::string::npos) << error;
  std::filesystem::remove(file);
}

INSTANTIATE_TEST_SUITE_P(Worlds, AutotuneTest, ::testing::Values(2, 3, 4),
                         [](const auto& info) { return std::to_string(info.param) + "ranks"; });

}  // namespace
}  // namespace chorus::test
