// chorusCommShrink and chorusCommGrow with ranks as threads: a communicator grown by new ranks (and one shrunk by
// a list, then grown back to its old size) computes right at its new size; arguments are checked before any traffic.
#include <gtest/gtest.h>

#include <functional>
#include <future>
#include <thread>
#include <vector>

#include "chorus/chorus.h"

namespace chorus::test {
namespace {

using namespace std::chrono_literals;

std::vector<chorusComm_t> makeWorld(int n) {
  chorusUniqueId id;
  EXPECT_EQ(chorusGetUniqueId(&id), chorusSuccess);
  std::vector<chorusComm_t> comms(n, nullptr);
  std::vector<std::thread> threads;
  chorusConfig_t config = CHORUS_CONFIG_INITIALIZER;
  config.timeoutSeconds = 30;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] { EXPECT_EQ(chorusCommInitRankConfig(&comms[r], n, id, r, &config), chorusSuccess); });
  }
  for (auto& t : threads) t.join();
  return comms;
}

// Runs body(i) on one thread per index and waits for all.
void together(int n, const std::function<void(int)>& body) {
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) threads.emplace_back(body, i);
  for (auto& t : threads) t.join();
}

// Every rank of `comms` (in rank order) contributes rank + 1; each must see the sum, and the right size and rank.
void expectSumOfRanks(const std::vector<chorusComm_t>& comms) {
  const int n = static_cast<int>(comms.size());
  together(n, [&](int r) {
    int size = 0, rank = -1;
    chorusCommCount(comms[r], &size);
    chorusCommUserRank(comms[r], &rank);
    EXPECT_EQ(size, n);
    EXPECT_EQ(rank, r);
    std::vector<float> v(1000, static_cast<float>(r + 1));
    ASSERT_EQ(chorusAllReduce(v.data(), v.data(), v.size(), chorusFloat32, chorusSum, comms[r], nullptr), chorusSuccess)
        << chorusGetLastError(comms[r]);
    EXPECT_EQ(v[999], n * (n + 1) / 2.0f);
  });
}

// The ranks of `comms` and `joiners` new ones grow into one communicator (old ranks first).
std::vector<chorusComm_t> grow(const std::vector<chorusComm_t>& comms, int joiners) {
  const int n = static_cast<int>(comms.size());
  chorusUniqueId id;
  EXPECT_EQ(chorusCommGetUniqueId(comms[0], &id), chorusSuccess);
  std::vector<chorusComm_t> grown(n + joiners, nullptr);
  together(n + joiners, [&](int r) {
    chorusResult_t result = r < n ? chorusCommGrow(comms[r], joiners, r == 0 ? &id : nullptr, -1, &grown[r], nullptr)
                                  : chorusCommGrow(nullptr, joiners, &id, r, &grown[r], nullptr);
    EXPECT_EQ(result, chorusSuccess) << r << ": " << chorusGetLastError(nullptr);
  });
  return grown;
}

TEST(ElasticCalls, GrowAddsNewRanksAfterTheOldOnes) {
  std::vector<chorusComm_t> comms = makeWorld(2);
  std::vector<chorusComm_t> grown = grow(comms, 2);
  expectSumOfRanks(grown);
  expectSumOfRanks(comms);  // the old communicator stays usable
  for (chorusComm_t c : grown) chorusCommDestroy(c);
  for (chorusComm_t c : comms) chorusCommDestroy(c);
}

TEST(ElasticCalls, ShrinkByListThenGrowBackToTheOldSize) {
  std::vector<chorusComm_t> comms = makeWorld(3);
  const int excluded[] = {1};
  std::vector<chorusComm_t> shrunk(2, nullptr);
  together(2, [&](int i) {
    const int r = i == 0 ? 0 : 2;
    EXPECT_EQ(chorusCommShrink(comms[r], excluded, 1, &shrunk[i], nullptr, CHORUS_SHRINK_DEFAULT), chorusSuccess)
        << chorusGetLastError(nullptr);
  });
  expectSumOfRanks(shrunk);
  std::vector<chorusComm_t> grown = grow(shrunk, 1);
  expectSumOfRanks(grown);
  for (auto* list : {&grown, &shrunk, &comms}) {
    for (chorusComm_t c : *list) chorusCommDestroy(c);
  }
}

TEST(ElasticCalls, ArgumentsAreCheckedBeforeAnyTraffic) {
  std::vector<chorusComm_t> comms = makeWorld(1);
  chorusComm_t out = nullptr;
  const int outside[] = {1};
  EXPECT_EQ(chorusCommShrink(nullptr, nullptr, 0, &out, nullptr, CHORUS_SHRINK_ABORT), chorusInvalidArgument);
  EXPECT_EQ(chorusCommShrink(comms[0], nullptr, 0, nullptr, nullptr, CHORUS_SHRINK_ABORT), chorusInvalidArgument);
  EXPECT_EQ(chorusCommShrink(comms[0], nullptr, 0, &out, nullptr, 7), chorusInvalidArgument);
  EXPECT_EQ(chorusCommShrink(comms[0], nullptr, 0, &out, nullptr, CHORUS_SHRINK_DEFAULT), chorusInvalidArgument);
  EXPECT_EQ(chorusCommShrink(comms[0], outside, 1, &out, nullptr, CHORUS_SHRINK_DEFAULT), chorusInvalidArgument);
  EXPECT_NE(std::string(chorusGetLastError(nullptr)).find("outside [0, 1)"), std::string::npos);
  EXPECT_EQ(chorusCommShrink(comms[0], nullptr, -1, &out, nullptr, CHORUS_SHRINK_DEFAULT), chorusInvalidArgument);
  const int self[] = {0};
  EXPECT_EQ(chorusCommShrink(comms[0], self, 1, &out, nullptr, CHORUS_SHRINK_DEFAULT), chorusInvalidUsage);
  EXPECT_EQ(out, nullptr);
  chorusUniqueId id;
  ASSERT_EQ(chorusCommGetUniqueId(comms[0], &id), chorusSuccess);
  EXPECT_EQ(chorusCommGrow(nullptr, 1, &id, 0, &out, nullptr), chorusInvalidArgument);  // 0 is an old rank's
  EXPECT_EQ(chorusCommGrow(nullptr, 1, &id, 2, &out, nullptr), chorusInvalidArgument);  // beyond 1 + 1
  EXPECT_EQ(chorusCommGrow(nullptr, 1, nullptr, 1, &out, nullptr), chorusInvalidArgument);
  EXPECT_EQ(chorusCommGrow(comms[0], 1, nullptr, -1, &out, nullptr), chorusInvalidArgument);  // rank 0 needs the id
  chorusUniqueId plain;
  ASSERT_EQ(chorusGetUniqueId(&plain), chorusSuccess);
  EXPECT_EQ(chorusCommGrow(nullptr, 1, &plain, 1, &out, nullptr), chorusInvalidArgument);  // not a grow id
  // A shrink of a lone healthy rank that excludes nobody: a communicator of one, usable.
  ASSERT_EQ(chorusCommShrink(comms[0], self, 0, &out, nullptr, CHORUS_SHRINK_DEFAULT), chorusSuccess)
      << chorusGetLastError(nullptr);
  expectSumOfRanks({out});
  chorusCommDestroy(out);
  chorusCommDestroy(comms[0]);
}

}  // namespace
}  // namespace chorus::test
