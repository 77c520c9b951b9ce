// Calls that cannot complete must say so, promptly: a rank that never arrives (timeout, naming the call and the
// ranks waited on) and chorusCommAbort from another thread (the blocked call returns within a second).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "chorus/chorus.h"
#include "src/api/comm_handle.h"

namespace chorus::test {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Initialises n communicators on n threads through one unique id.
// n communicators of one world, one per rank, each waiting at most timeoutSeconds.
std::vector<chorusComm_t> makeWorld(int n, double timeoutSeconds) {
  chorusUniqueId id;
  EXPECT_EQ(chorusGetUniqueId(&id), chorusSuccess);
  std::vector<chorusComm_t> comms(n, nullptr);
  std::vector<std::thread> threads;
  chorusConfig_t config = CHORUS_CONFIG_INITIALIZER;
  config.timeoutSeconds = timeoutSeconds;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back(
        [&, r] { EXPECT_EQ(chorusCommInitRankConfig(&comms[r], n, id, r, &config), chorusSuccess) << r; });
  }
  for (auto& t : threads) t.join();
  return comms;
}

struct Outcome {
  chorusResult_t result = chorusSuccess;
  double seconds = 0;
  std::string error;
};

TEST(FailureModesTest, ARankThatNeverArrivesTimesOutNamingTheCallAndTheRanks) {
  const int n = 3;
  std::vector<chorusComm_t> comms = makeWorld(n, 1);
  ASSERT_EQ(comms.size(), 3u);
  // Ranks 0 and 1 call allreduce; rank 2 never does.
  std::vector<std::future<Outcome>> calls;
  for (int r = 0; r < 2; ++r) {
    calls.push_back(std::async(std::launch::async, [&, r] {
      std::vector<float> v(1 << 16, 1.0f);
      Outcome o;
      auto t0 = Clock::now();
      o.result = chorusAllReduce(v.data(), v.data(), v.size(), chorusFloat32, chorusSum, comms[r], nullptr);
      o.seconds = secondsSince(t0);
      o.error = chorusGetLastError(comms[r]);
      return o;
    }));
  }
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(calls[r].wait_for(20s), std::future_status::ready) << "rank " << r << " hangs";
    Outcome o = calls[r].get();
    // Either this rank timed out itself, or it heard at once that its peer gave up after timing out.
    EXPECT_TRUE(o.result == chorusTimeout || o.result == chorusRemoteError) << r << ": " << o.error;
    EXPECT_LT(o.seconds, 3.0) << r << ": " << o.error;
    EXPECT_NE(o.error.find("allreduce #0"), std::string::npos) << o.error;
    if (o.result == chorusTimeout) {
      EXPECT_NE(o.error.find("waiting on rank"), std::string::npos) << o.error;
    }
    chorusResult_t async = chorusSuccess;
    EXPECT_EQ(chorusCommGetAsyncError(comms[r], &async), chorusSuccess);
    EXPECT_EQ(async, o.result);
  }
  for (chorusComm_t c : comms) chorusCommDestroy(c);
}

TEST(FailureModesTest, AbortFromAnotherThreadReturnsTheBlockedCallWithinASecond) {
  std::vector<chorusComm_t> comms = makeWorld(2, 60);
  ASSERT_EQ(comms.size(), 2u);
  chorusComm_t victim = comms[0];
  // Rank 0 calls allreduce alone: it blocks on rank 1, which never calls.
  auto call = std::async(std::launch::async, [victim] {
    std::vector<float> v(1024, 1.0f);
    Outcome o;
    o.result = chorusAllReduce(v.data(), v.data(), v.size(), chorusFloat32, chorusSum, victim, nullptr);
    o.error = chorusGetLastError(nullptr);  // the comm is freed by the abort: read this thread's copy
    return o;
  });
  // Abort only once the call is inside the communicator (aborting earlier would free it under the caller).
  auto waitStart = Clock::now();
  while (!victim->impl->callInProgress()) {
    ASSERT_LT(secondsSince(waitStart), 10.0) << "the call never started";
    std::this_thread::yield();
  }
  auto t0 = Clock::now();
  EXPECT_EQ(chorusCommAbort(victim), chorusSuccess);
  ASSERT_EQ(call.wait_for(5s), std::future_status::ready) << "the blocked call did not return after the abort";
  Outcome o = call.get();
  EXPECT_LT(secondsSince(t0), 1.0);
  EXPECT_EQ(o.result, chorusRemoteError) << o.error;
  EXPECT_NE(o.error.find("aborted"), std::string::npos) << o.error;
  // The peer hears that rank 0 (its peer 0) gave up. Its first allreduce may still succeed (rank 0's data for it was
  // already on the wire before the abort); the one after must fail at once instead of waiting for the timeout.
  std::vector<float> w(1024, 1.0f);
  auto t1 = Clock::now();
  chorusResult_t r = chorusAllReduce(w.data(), w.data(), w.size(), chorusFloat32, chorusSum, comms[1], nullptr);
  if (r == chorusSuccess)
    r = chorusAllReduce(w.data(), w.data(), w.size(), chorusFloat32, chorusSum, comms[1], nullptr);
  EXPECT_EQ(r, chorusRemoteError);
  EXPECT_LT(secondsSince(t1), 2.0) << chorusGetLastError(comms[1]);
  EXPECT_NE(std::string(chorusGetLastError(comms[1])).find("peer 0"), std::string::npos)
      << chorusGetLastError(comms[1]);
  chorusCommDestroy(comms[1]);
}

}  // namespace
}  // namespace chorus::test
