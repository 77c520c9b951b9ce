// Host streams and events: non-blocking host calls that run in the background in issue order, the errors they
// carry, and abort while calls are queued.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "tests/collectives/suite_knobs.h"
#include "tests/harness/thread_world.h"

namespace chorus::test {
namespace {

constexpr std::chrono::seconds kStreamDeadline{120};

TEST(HostStream, QueuedCallsRunInOrderAcrossStreamsAndBlockingCalls) {
  runThreadWorld(
      3,
      [](chorusComm_t comm, int rank) {
        chorusStream_t a = nullptr, b = nullptr;
        ASSERT_EQ(chorusHostStreamCreate(&a), chorusSuccess);
        ASSERT_EQ(chorusHostStreamCreate(&b), chorusSuccess);
        constexpr int kCalls = 40;
        std::vector<std::vector<int32_t>> data(kCalls);
        for (int k = 0; k < kCalls; ++k) {
          // Alternate streams; counts differ per call, so that calls run out of issue order would mismatch.
          data[k].assign(100 + static_cast<size_t>(k), rank + k);
          ASSERT_EQ(chorusAllReduce(data[k].data(), data[k].data(), data[k].size(), chorusInt32, chorusSum, comm,
                                    k % 2 ? a : b),
                    chorusSuccess)
              << chorusGetLastError(comm);
        }
        // A blocking call issued after them runs after them.
        std::vector<int32_t> last(7, 1);
        ASSERT_EQ(chorusAllReduce(last.data(), last.data(), last.size(), chorusInt32, chorusSum, comm, nullptr),
                  chorusSuccess)
            << chorusGetLastError(comm);
        EXPECT_EQ(chorusStreamQuery(a), chorusSuccess);
        EXPECT_EQ(chorusStreamSynchronize(a), chorusSuccess) << chorusGetLastError(nullptr);
        EXPECT_EQ(chorusStreamSynchronize(b), chorusSuccess) << chorusGetLastError(nullptr);
        for (int k = 0; k < kCalls; ++k) {
          for (int32_t v : data[k]) ASSERT_EQ(v, 0 + 1 + 2 + 3 * k) << "call " << k;
        }
        EXPECT_EQ(last[0], 3);
        EXPECT_EQ(chorusHostStreamDestroy(a), chorusSuccess);
        EXPECT_EQ(chorusHostStreamDestroy(b), chorusSuccess);
      },
      kStreamDeadline, suiteConfig());
}

// Events mark a point of a stream; waiting on one runs what is queued before it.
TEST(HostStream, EventsAndGroupsOnAStream) {
  runThreadWorld(
      2,
      [](chorusComm_t comm, int rank) {
        chorusStream_t s = nullptr;
        chorusEvent_t first = nullptr, second = nullptr, never = nullptr;
        ASSERT_EQ(chorusHostStreamCreate(&s), chorusSuccess);
        ASSERT_EQ(chorusEventCreate(&first), chorusSuccess);
        ASSERT_EQ(chorusEventCreate(&second), chorusSuccess);
        ASSERT_EQ(chorusEventCreate(&never), chorusSuccess);
        EXPECT_EQ(chorusEventQuery(never), chorusSuccess);  // recorded on nothing: nothing to wait for
        std::vector<float> x(1 << 16, 1.0f), y(1 << 16, 2.0f);
        ASSERT_EQ(chorusAllReduce(x.data(), x.data(), x.size(), chorusFloat32, chorusSum, comm, s), chorusSuccess);
        ASSERT_EQ(chorusEventRecord(first, s), chorusSuccess);
        // A group queued on the stream: a send/receive pair and an allreduce.
        std::vector<float> out(1000, static_cast<float>(rank)), in(1000, -1.0f);
        ASSERT_EQ(chorusGroupStart(), chorusSuccess);
        ASSERT_EQ(chorusSend(out.data(), out.size(), chorusFloat32, 1 - rank, comm, s), chorusSuccess);
        ASSERT_EQ(chorusRecv(in.data(), in.size(), chorusFloat32, 1 - rank, comm, s), chorusSuccess);
        ASSERT_EQ(chorusAllReduce(y.data(), y.data(), y.size(), chorusFloat32, chorusSum, comm, s), chorusSuccess);
        // Waiting inside a group is a usage error, and makes the group fail at its end.
        EXPECT_EQ(chorusEventSynchronize(first), chorusInvalidUsage);
        EXPECT_EQ(chorusGroupEnd(), chorusInvalidUsage);
        ASSERT_EQ(chorusGroupStart(), chorusSuccess);
        ASSERT_EQ(chorusSend(out.data(), out.size(), chorusFloat32, 1 - rank, comm, s), chorusSuccess);
        ASSERT_EQ(chorusRecv(in.data(), in.size(), chorusFloat32, 1 - rank, comm, s), chorusSuccess);
        ASSERT_EQ(chorusAllReduce(y.data(), y.data(), y.size(), chorusFloat32, chorusSum, comm, s), chorusSuccess);
        ASSERT_EQ(chorusGroupEnd(), chorusSuccess) << chorusGetLastError(nullptr);
        ASSERT_EQ(chorusEventRecord(second, s), chorusSuccess);
        ASSERT_EQ(chorusEventSynchronize(first), chorusSuccess) << chorusGetLastError(nullptr);
        EXPECT_EQ(x[0], 2.0f);
        ASSERT_EQ(chorusEventSynchronize(second), chorusSuccess) << chorusGetLastError(nullptr);
        EXPECT_EQ(chorusEventQuery(second), chorusSuccess);
        EXPECT_EQ(y[12345], 4.0f);
        EXPECT_EQ(in[999], static_cast<float>(1 - rank));
        for (chorusEvent_t e : {first, second, never}) EXPECT_EQ(chorusEventDestroy(e), chorusSuccess);
        EXPECT_EQ(chorusHostStreamDestroy(s), chorusSuccess);
      },
      kStreamDeadline, suiteConfig());
}

// Four threads per rank, each with a communicator and a stream of its own, queue at once.
TEST(HostStream, StreamsFromSeveralThreads) {
  runThreadWorld(
      2,
      [](chorusComm_t comm, int rank) {
        constexpr int kThreads = 4;
        std::vector<chorusComm_t> comms(kThreads);
        for (int t = 0; t < kThreads; ++t) {
          chorusUniqueId id{};
          if (rank == 0) {
            ASSERT_EQ(chorusGetUniqueId(&id), chorusSuccess);
          }
          ASSERT_EQ(chorusBroadcast(&id, &id, sizeof(id), chorusUint8, 0, comm, nullptr), chorusSuccess);
          chorusConfig_t config = CHORUS_CONFIG_INITIALIZER;
          config.timeoutSeconds = 30;
          ASSERT_EQ(chorusCommInitRankConfig(&comms[t], 2, id, rank, &config), chorusSuccess);
        }
        std::vector<std::thread> threads;
        std::atomic<int> wrong{0};
        for (int t = 0; t < kThreads; ++t) {
          threads.emplace_back([&, t] {
            chorusStream_t s = nullptr;
            if (chorusHostStreamCreate(&s) != chorusSuccess) {
              wrong.fetch_add(1);
              return;
            }
            std::vector<std::vector<int64_t>> data(50, std::vector<int64_t>(64 + static_cast<size_t>(t), rank + 1));
            for (auto& d : data) {
              if (chorusAllReduce(d.data(), d.data(), d.size(), chorusInt64, chorusSum, comms[t], s) != chorusSuccess) {
                wrong.fetch_add(1);
              }
            }
            if (chorusHostStreamDestroy(s) != chorusSuccess) wrong.fetch_add(1);
            for (auto& d : data) {
              if (d[0] != 3) wrong.fetch_add(1);
            }
          });
        }
        for (auto& th : threads) th.join();
        EXPECT_EQ(wrong.load(), 0);
        for (chorusComm_t c : comms) EXPECT_EQ(chorusCommDestroy(c), chorusSuccess);
      },
      kStreamDeadline, suiteConfig());
}

// Calls waited for as soon as they are queued run on their callers' threads, and the stream's thread then sleeps;
// a call that nobody waits for after them must still run in the background (polled with query only). A fresh stream
// each round: its first call races the stream's thread, asleep until then, against the caller that waits for it.
TEST(HostStream, ACallLeftToTheStreamAfterWaitedOnesStillRuns) {
  runThreadWorld(
      2,
      [](chorusComm_t comm, int rank) {
        std::vector<float> x(256, 1.0f);
        for (int round = 0; round < 20; ++round) {
          chorusStream_t s = nullptr;
          ASSERT_EQ(chorusHostStreamCreate(&s), chorusSuccess);
          for (int k = 0; k < 3; ++k) {
            ASSERT_EQ(chorusAllReduce(x.data(), x.data(), x.size(), chorusFloat32, chorusSum, comm, s), chorusSuccess);
            ASSERT_EQ(chorusStreamSynchronize(s), chorusSuccess) << chorusGetLastError(nullptr);
          }
          std::vector<float> left(1000, static_cast<float>(rank + 1));
          ASSERT_EQ(chorusAllReduce(left.data(), left.data(), left.size(), chorusFloat32, chorusSum, comm, s),
                    chorusSuccess);
          const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
          chorusResult_t r = chorusInProgress;
          while ((r = chorusStreamQuery(s)) == chorusInProgress) {
            ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "round " << round << ": the call never ran";
            std::this_thread::yield();
          }
          ASSERT_EQ(r, chorusSuccess) << chorusGetLastError(nullptr);
          EXPECT_EQ(left[999], 3.0f);
          EXPECT_EQ(chorusHostStreamDestroy(s), chorusSuccess);
        }
      },
      kStreamDeadline, suiteConfig());
}

// A call that fails fails the stream: synchronize, query and events return its error, later calls are refused.
TEST(HostStream, AFailedCallFailsTheStream) {
  runThreadWorld(
      2,
      [](chorusComm_t comm, int rank) {
        chorusStream_t s = nullptr;
        chorusEvent_t e = nullptr;
        ASSERT_EQ(chorusHostStreamCreate(&s), chorusSuccess);
        ASSERT_EQ(chorusEventCreate(&e), chorusSuccess);
        std::vector<float> v(100, 1.0f);
        // The ranks disagree about the count: both fail.
        ASSERT_EQ(chorusAllReduce(v.data(), v.data(), rank == 0 ? 10 : 12, chorusFloat32, chorusSum, comm, s),
                  chorusSuccess);
        ASSERT_EQ(chorusEventRecord(e, s), chorusSuccess);
        const chorusResult_t synced = chorusStreamSynchronize(s);
        EXPECT_NE(synced, chorusSuccess);
        EXPECT_NE(std::string(chorusGetLastError(nullptr)), "");
        EXPECT_EQ(chorusStreamQuery(s), synced);
        EXPECT_EQ(chorusEventSynchronize(e), synced);
        EXPECT_EQ(chorusEventQuery(e), synced);
        EXPECT_EQ(chorusAllReduce(v.data(), v.data(), 10, chorusFloat32, chorusSum, comm, s), synced);
        EXPECT_EQ(chorusEventDestroy(e), chorusSuccess);
        EXPECT_NE(chorusHostStreamDestroy(s), chorusSuccess);
      },
      kStreamDeadline, suiteConfig());
}

TEST(HostStream, ArgumentErrors) {
  runThreadWorld(
      2,
      [](chorusComm_t comm, int) {
        chorusStream_t s = nullptr;
        ASSERT_EQ(chorusHostStreamCreate(&s), chorusSuccess);
        ASSERT_EQ(chorusHostStreamDestroy(s), chorusSuccess);
        float x = 1.0f;
        EXPECT_EQ(chorusAllReduce(&x, &x, 1, chorusFloat32, chorusSum, comm, s), chorusInvalidArgument);
        EXPECT_NE(std::string(chorusGetLastError(comm)).find("destroyed"), std::string::npos);
        EXPECT_EQ(chorusStreamSynchronize(s), chorusInvalidArgument);
        EXPECT_EQ(chorusHostStreamDestroy(s), chorusInvalidArgument);
        EXPECT_EQ(chorusHostStreamCreate(nullptr), chorusInvalidArgument);
        EXPECT_EQ(chorusStreamSynchronize(nullptr), chorusSuccess);  // the blocking calls: always done
        EXPECT_EQ(chorusEventRecord(nullptr, nullptr), chorusInvalidArgument);
      },
      kStreamDeadline, suiteConfig());
}

// Rank 1 never makes its calls; rank 0 aborts its communicator while its calls are queued: the stream fails them
// promptly (long before the 60 s timeout) and the abort returns.
TEST(HostStream, AbortWhileCallsAreQueued) {
  chorusUniqueId id{};
  ASSERT_EQ(chorusGetUniqueId(&id), chorusSuccess);
  chorusComm_t comms[2] = {nullptr, nullptr};
  std::vector<std::thread> joiners;
  for (int r = 0; r < 2; ++r) {
    joiners.emplace_back([&, r] {
      chorusConfig_t config = CHORUS_CONFIG_INITIALIZER;
      config.timeoutSeconds = 60;
      EXPECT_EQ(chorusCommInitRankConfig(&comms[r], 2, id, r, &config), chorusSuccess);
    });
  }
  for (auto& t : joiners) t.join();
  ASSERT_TRUE(comms[0] && comms[1]);
  chorusStream_t s = nullptr;
  ASSERT_EQ(chorusHostStreamCreate(&s), chorusSuccess);
  std::vector<std::vector<float>> data(20, std::vector<float>(1000, 1.0f));
  for (auto& d : data) {
    ASSERT_EQ(chorusAllReduce(d.data(), d.data(), d.size(), chorusFloat32, chorusSum, comms[0], s), chorusSuccess);
  }
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(chorusCommAbort(comms[0]), chorusSuccess);
  const chorusResult_t synced = chorusStreamSynchronize(s);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(synced, chorusRemoteError) << chorusGetLastError(nullptr);
  EXPECT_NE(std::string(chorusGetLastError(nullptr)).find("abort"), std::string::npos) << chorusGetLastError(nullptr);
  EXPECT_LT(seconds, 10.0);
  EXPECT_EQ(chorusHostStreamDestroy(s), chorusRemoteError);
  EXPECT_EQ(chorusCommDestroy(comms[1]), chorusSuccess);
}

// The C++ API: chorus::HostStream and chorus::Event around a chorus::Communicator's calls.
TEST(HostStream, CppApi) {
  const chorusUniqueId id = chorus::makeUniqueId();
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back([&id, r] {
      chorus::Communicator comm(2, id, r, suiteConfig());
      chorus::HostStream stream;
      chorus::Event event;
      std::vector<int64_t> a(1000, r + 1), b(10, r);
      comm.allReduce(std::span<int64_t>(a), chorus::ReduceOp::kSum, stream.handle());
      event.record(stream);
      comm.allReduce(std::span<int64_t>(b), chorus::ReduceOp::kMax, stream.handle());
      event.synchronize();
      EXPECT_EQ(a[999], 3);
      stream.synchronize();
      EXPECT_TRUE(stream.done());
      EXPECT_TRUE(event.done());
      EXPECT_EQ(b[0], 1);
      // A failure shows as an exception from synchronize().
      std::vector<float> bad(4, 1.0f);
      comm.allReduce(std::span<float>(bad).first(r == 0 ? 2 : 3), chorus::ReduceOp::kSum, stream.handle());
      EXPECT_THROW(stream.synchronize(), chorus::Exception);
    });
  }
  for (auto& t : ranks) t.join();
}

}  // namespace
}  // namespace chorus::test
