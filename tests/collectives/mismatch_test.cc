// Ranks that disagree about a call (count, datatype, op, root, collective) must get an error, never a hang or a
// silent success everywhere.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "tests/collectives/suite_knobs.h"
#include "tests/harness/thread_world.h"

namespace chorus::test {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr double kTimeoutSeconds = 3;

struct Mismatch {
  const char* what;
  // Makes this rank's side of the call on a buffer of 8 * 4096 floats.
  std::function<chorusResult_t(chorusComm_t comm, int rank, float* buffer)> call;
};

std::vector<Mismatch> mismatches() {
  return {
      {"allreduce count 1000 vs 1001",
       [](chorusComm_t comm, int rank, float* b) {
         return chorusAllReduce(b, b, rank == 0 ? 1000 : 1001, chorusFloat32, chorusSum, comm, nullptr);
       }},
      {"allreduce float32 vs int32",
       [](chorusComm_t comm, int rank, float* b) {
         return chorusAllReduce(b, b, 1000, rank == 0 ? chorusFloat32 : chorusInt32, chorusSum, comm, nullptr);
       }},
      {"allreduce sum vs max",
       [](chorusComm_t comm, int rank, float* b) {
         return chorusAllReduce(b, b, 7, chorusFloat32, rank == 0 ? chorusSum : chorusMax, comm, nullptr);
       }},
      {"broadcast root 0 vs root 1",
       [](chorusComm_t comm, int rank, float* b) {
         return chorusBroadcast(b, b, 5000, chorusFloat32, rank == 0 ? 0 : 1, comm, nullptr);
       }},
      {"allgather vs reducescatter",
       [](chorusComm_t comm, int rank, float* b) {
         return rank == 0 ? chorusAllGather(b, b + 4096, 100, chorusFloat32, comm, nullptr)
                          : chorusReduceScatter(b, b + 4096, 100, chorusFloat32, chorusSum, comm, nullptr);
       }},
  };
}

struct RankResult {
  std::atomic<int> mismatched{-1};  // what the mismatched call returned
  std::atomic<int> next{-1};        // what a correct allreduce right after it returned
  std::atomic<double> secondsToError{-1};
};

// Runs the mismatched call and then one correct allreduce on every rank of a fresh world.
std::vector<RankResult> runMismatch(int nranks, const Mismatch& m, double timeoutSeconds) {
  Config config = suiteConfig();
  config.timeoutSeconds = timeoutSeconds;
  std::vector<RankResult> results(nranks);
  const Clock::time_point start = Clock::now();
  runThreadWorld(
      nranks,
      [&](chorusComm_t comm, int rank) {
        std::vector<float> buffer(8 * 4096, 1.0f);
        chorusResult_t r = m.call(comm, rank, buffer.data());
        results[rank].mismatched = r;
        if (r == chorusSuccess) {
          r = chorusAllReduce(buffer.data(), buffer.data(), 10, chorusFloat32, chorusSum, comm, nullptr);
          results[rank].next = r;
        }
        if (r != chorusSuccess) {
          results[rank].secondsToError = std::chrono::duration<double>(Clock::now() - start).count();
        }
      },
      60s, config);
  return results;
}

class MismatchTest : public ::testing::TestWithParam<int> {};

// Every rank sees an error by the call after the mismatched one at the latest, within CHORUS_TIMEOUT. (A
// mismatched root can go unnoticed by the call itself: every rank that believes itself root only sends.)
TEST_P(MismatchTest, EveryRankGetsAnErrorWithinTheTimeout) {
  const int nranks = GetParam();
  for (const Mismatch& m : mismatches()) {
    SCOPED_TRACE(m.what);
    std::vector<RankResult> results = runMismatch(nranks, m, kTimeoutSeconds);
    for (int r = 0; r < nranks; ++r) {
      const bool failed = results[r].mismatched != chorusSuccess || results[r].next != chorusSuccess;
      EXPECT_TRUE(failed) << "rank " << r << ": both the mismatched call and the next one succeeded";
      EXPECT_LT(results[r].secondsToError.load(), 2 * kTimeoutSeconds + 5) << "rank " << r;
    }
  }
}

// The rank that detects a mismatch abandons its connections, so every peer fails within a second too.
TEST_P(MismatchTest, EveryRankFailsFastWhenOneDetectsAMismatch) {
  const int nranks = GetParam();
  for (const Mismatch& m : mismatches()) {
    SCOPED_TRACE(m.what);
    std::vector<RankResult> results = runMismatch(nranks, m, 30);
    for (int r = 0; r < nranks; ++r) {
      EXPECT_GE(results[r].secondsToError.load(), 0) << "rank " << r;
      EXPECT_LT(results[r].secondsToError.load(), 1.0) << "rank " << r;
    }
  }
}

// Every rank learns which ranks called what, and gets chorusInvalidUsage.
TEST(MismatchListingTest, EveryRankListsWhoCalledWhat) {
  constexpr int kRanks = 3;
  std::vector<std::string> messages(kRanks);
  std::vector<int> codes(kRanks, -1);
  runThreadWorld(
      kRanks,
      [&](chorusComm_t comm, int rank) {
        std::vector<float> buffer(2000, 1.0f);
        codes[rank] = chorusAllReduce(buffer.data(), buffer.data(), rank == 1 ? 1001 : 1000, chorusFloat32, chorusSum,
                                      comm, nullptr);
        messages[rank] = chorusGetLastError(comm);
      },
      60s, suiteConfig());
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_EQ(codes[r], chorusInvalidUsage) << "rank " << r << ": " << messages[r];
    EXPECT_NE(messages[r].find("does not match across ranks"), std::string::npos) << messages[r];
    EXPECT_NE(messages[r].find("ranks 0, 2 called allreduce #0 (count 1000, float32, sum)"), std::string::npos)
        << messages[r];
    EXPECT_NE(messages[r].find("rank 1 called allreduce #0 (count 1001, float32, sum)"), std::string::npos)
        << messages[r];
  }
}

// A rank that completed its side of a mismatched call (a root that believes itself root only sends) fails in its
// next call: the listing names that call, and no rank waits for a description of the first one from it.
// A small broadcast whose root differs across ranks goes through on every rank (its sends are buffered); the next
// call finds data it did not expect, and the listing says that an earlier call did not match.
TEST(MismatchListingTest, ACallEveryRankGotThroughWithDifferentRootsIsNamedAsAnEarlierCall) {
  constexpr int kRanks = 3;
  std::vector<std::string> messages(kRanks);
  std::vector<chorusResult_t> broadcast(kRanks, chorusInternalError);
  runThreadWorld(
      kRanks,
      [&](chorusComm_t comm, int rank) {
        std::vector<float> buffer(10, 1.0f);
        broadcast[rank] = chorusBroadcast(buffer.data(), buffer.data(), 10, chorusFloat32, rank == 0 ? 0 : 1, comm,
                                          nullptr);
        if (broadcast[rank] == chorusSuccess) {
          chorusAllReduce(buffer.data(), buffer.data(), 10, chorusFloat32, chorusSum, comm, nullptr);
        }
        messages[rank] = chorusGetLastError(comm);
      },
      60s, suiteConfig());
  for (int r = 0; r < kRanks; ++r) {
    if (broadcast[r] != chorusSuccess) GTEST_SKIP() << "rank " << r << " failed in the broadcast: " << messages[r];
  }
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_NE(messages[r].find("does not match across ranks"), std::string::npos) << messages[r];
    EXPECT_NE(messages[r].find("an earlier call did not match"), std::string::npos) << messages[r];
  }
}

TEST(MismatchListingTest, ARankThatWentOnIsListedWithTheCallItFailedIn) {
  constexpr int kRanks = 3;
  std::vector<std::string> messages(kRanks);
  std::vector<double> seconds(kRanks, -1);
  const Clock::time_point start = Clock::now();
  runThreadWorld(
      kRanks,
      [&](chorusComm_t comm, int rank) {
        std::vector<float> buffer(5000, 1.0f);
        chorusResult_t r = chorusBroadcast(buffer.data(), buffer.data(), 5000, chorusFloat32, rank == 0 ? 0 : 1,
                                           comm, nullptr);
        if (r == chorusSuccess)
          r = chorusAllReduce(buffer.data(), buffer.data(), 10, chorusFloat32, chorusSum, comm, nullptr);
        if (r != chorusSuccess) seconds[rank] = std::chrono::duration<double>(Clock::now() - start).count();
        messages[rank] = chorusGetLastError(comm);
      },
      60s, suiteConfig());
  // Which ranks go on is the transports' business (here, both that believe in different roots; or all three, when
  // the kernel buffered every send of the broadcast): the listing must be made either way, without the listing's
  // wait for a description that never comes.
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_GE(seconds[r], 0) << "rank " << r;
    EXPECT_LT(seconds[r], 1.5) << "rank " << r << ": " << messages[r];
    EXPECT_NE(messages[r].find("does not match across ranks"), std::string::npos) << messages[r];
    EXPECT_TRUE(messages[r].find("failed in a later call") != std::string::npos ||
                messages[r].find("failed in an earlier call") != std::string::npos ||
                messages[r].find("an earlier call did not match") != std::string::npos)
        << messages[r];
  }
}

// checkMismatch off: no listing, but a size mismatch is still an error (never a buffer overrun).
TEST(MismatchListingTest, OffStillRefusesWrongSizes) {
  Config config = suiteConfig();
  config.checkMismatch = false;
  std::vector<int> codes(2, -1);
  std::vector<std::string> messages(2);
  runThreadWorld(
      2,
      [&](chorusComm_t comm, int rank) {
        std::vector<float> buffer(2000, 1.0f);
        codes[rank] = chorusAllReduce(buffer.data(), buffer.data(), rank == 1 ? 1001 : 1000, chorusFloat32, chorusSum,
                                      comm, nullptr);
        messages[rank] = chorusGetLastError(comm);
      },
      60s, config);
  for (int r = 0; r < 2; ++r) {
    EXPECT_NE(codes[r], chorusSuccess) << "rank " << r;
    EXPECT_EQ(messages[r].find("does not match across ranks"), std::string::npos) << messages[r];
  }
}

INSTANTIATE_TEST_SUITE_P(Worlds, MismatchTest, ::testing::Values(2, 3),
                         [](const auto& info) { return std::to_string(info.param) + "ranks"; });

}  // namespace
}  // namespace chorus::test
