// Windows with put and signal (chorus.h's one-sided calls) over shared memory and TCP, 1 to 5 ranks as threads: windows
// of different sizes, puts at offsets, signals counted and consumed, ordering, bounds, and two uses checked against the
// two-sided calls (a pipeline stage hand-off, an MoE-style dispatch with uneven counts). "memalloc": over shared
// memory with every window in chorusMemAlloc memory (window_memory.h).
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "src/api/comm_handle.h"
#include "tests/collectives/suite_knobs.h"
#include "tests/collectives/window_memory.h"
#include "tests/harness/thread_world.h"

namespace chorus::test {
namespace {

constexpr std::chrono::seconds kDeadline{120};

Config configFor(const char* param) {
  Config c = suiteConfig();
  c.transports = std::string(param) == "memalloc" ? "" : param;
  return c;
}

uint8_t byteOf(int from, int to, size_t i) { return static_cast<uint8_t>(from * 31 + to * 7 + i * 13 + (i >> 8)); }

class Windows : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override { windowMemAlloc() = std::string(GetParam()) == "memalloc"; }
  void TearDown() override { windowMemAlloc() = false; }
};

// Every rank's window has its own size; each rank puts a block into every other rank's window at an offset that
// names the sender, with a signal each; every rank waits for one signal from each and checks the bytes.
TEST_P(Windows, PutsAtOffsetsIntoWindowsOfDifferentSizes) {
  for (int n = 1; n <= 5; ++n) {
    runThreadWorld(
        n,
        [&](chorusComm_t comm, int rank) {
          const size_t block = 1000 + 24 * static_cast<size_t>(rank);  // what each sender puts into this rank
          WindowVector<uint8_t> mine(block * static_cast<size_t>(n) + 17, 0);
          chorusWindow_t win = nullptr;
          ASSERT_EQ(chorusCommWindowRegister(comm, mine.data(), mine.size(), &win, CHORUS_WIN_DEFAULT), chorusSuccess)
              << chorusGetLastError(comm);
          // Over shared memory signals are counters, and chorusMemAlloc windows are stored into by the sender.
          const std::string paths = comm->impl->windowPaths(), param = GetParam();
          if (n > 1 && param != "tcp") {
            EXPECT_NE(paths.find("shm signal counters"), std::string::npos) << paths;
          }
          if (n > 1) {
            EXPECT_EQ(paths.find("shm mapped window") != std::string::npos, param == "memalloc") << paths;
          }
          // Ranks take turns putting, so that no pair ever puts to each other at once before waiting.
          for (int from = 0; from < n; ++from) {
            if (rank == from) {
              for (int to = 0; to < n; ++to) {
                const size_t b = 1000 + 24 * static_cast<size_t>(to);
                std::vector<uint8_t> out(b);
                for (size_t i = 0; i < b; ++i) out[i] = byteOf(rank, to, i);
                ASSERT_EQ(chorusPutSignal(out.data(), b, chorusUint8, to, win, b * static_cast<size_t>(rank), 0, 0, 0,
                                          comm, nullptr),
                          chorusSuccess)
                    << chorusGetLastError(comm);
              }
            } else {
              chorusWaitSignalDesc_t d{.opCnt = 1, .peer = from, .sigIdx = 0, .ctx = 0};
              ASSERT_EQ(chorusWaitSignal(1, &d, comm, nullptr), chorusSuccess) << chorusGetLastError(comm);
            }
          }
          chorusWaitSignalDesc_t self{.opCnt = 1, .peer = rank, .sigIdx = 0, .ctx = 0};
          ASSERT_EQ(chorusWaitSignal(1, &self, comm, nullptr), chorusSuccess) << chorusGetLastError(comm);
          for (int from = 0; from < n; ++from) {
            for (size_t i = 0; i < block; ++i) {
              ASSERT_EQ(mine[block * static_cast<size_t>(from) + i], byteOf(from, rank, i)) << "from " << from;
            }
          }
          for (size_t i = block * static_cast<size_t>(n); i < mine.size(); ++i) ASSERT_EQ(mine[i], 0);
          ASSERT_EQ(chorusCommWindowDeregister(comm, win), chorusSuccess) << chorusGetLastError(comm);
        },
        kDeadline, configFor(GetParam()));
  }
}

// Many puts then one signal on another index: once the signal is seen, every put's bytes are there. Signals are
// counted per index and consumed by the wait: a second wait for the same count needs new signals.
TEST_P(Windows, ManyPutsThenOneSignalAllVisibleAndSignalsConsumed) {
  runThreadWorld(
      2,
      [&](chorusComm_t comm, int rank) {
        constexpr int kPuts = 64;
        constexpr size_t kEach = 3000;
        WindowVector<float> mine(kPuts * kEach, -1.0f);
        chorusWindow_t win = nullptr;
        ASSERT_EQ(chorusCommWindowRegister(comm, mine.data(), mine.size() * sizeof(float), &win, 0), chorusSuccess)
            << chorusGetLastError(comm);
        if (rank == 0) {
          std::vector<float> out(kEach);
          for (int p = 0; p < kPuts; ++p) {
            for (size_t i = 0; i < kEach; ++i) out[i] = static_cast<float>(p * 10000 + static_cast<int>(i));
            ASSERT_EQ(chorusPutSignal(out.data(), kEach, chorusFloat32, 1, win, p * kEach * sizeof(float), 1, 0, 0,
                                      comm, nullptr),
                      chorusSuccess)
                << chorusGetLastError(comm);
          }
          ASSERT_EQ(chorusSignal(1, 2, 0, 0, comm, nullptr), chorusSuccess) << chorusGetLastError(comm);
          ASSERT_EQ(chorusSignal(1, 2, 5, 0, comm, nullptr), chorusSuccess) << chorusGetLastError(comm);
          ASSERT_EQ(chorusWindowFlush(comm, win), chorusSuccess);
        } else {
          chorusWaitSignalDesc_t last{.opCnt = 1, .peer = 0, .sigIdx = 2, .ctx = 0};
          ASSERT_EQ(chorusWaitSignal(1, &last, comm, nullptr), chorusSuccess) << chorusGetLastError(comm);
          for (int p = 0; p < kPuts; ++p) {
            for (size_t i = 0; i < kEach; ++i) {
              ASSERT_EQ(mine[p * kEach + i], static_cast<float>(p * 10000 + static_cast<int>(i)));
            }
          }
          // The 64 put signals on index 1 arrived already; two waits consume them in parts.
          chorusWaitSignalDesc_t puts[2] = {{.opCnt = 60, .peer = 0, .sigIdx = 1, .ctx = 0},
                                            {.opCnt = 4, .peer = 0, .sigIdx = 1, .ctx = 0}};
          ASSERT_EQ(chorusWaitSignal(2, puts, comm, nullptr), chorusSuccess) << chorusGetLastError(comm);
          chorusWaitSignalDesc_t other{.opCnt = 1, .peer = 0, .sigIdx = 2, .ctx = 5};
          ASSERT_EQ(chorusWaitSignal(1, &other, comm, nullptr), chorusSuccess) << chorusGetLastError(comm);
        }
        // A message from 0 to 1 after the put traffic: the signals were consumed, the two-sided stream is in step.
        int token = rank == 0 ? 42 : 0;
        if (rank == 0) {
          ASSERT_EQ(chorusSend(&token, 1, chorusInt32, 1, comm, nullptr), chorusSuccess);
        } else {
          ASSERT_EQ(chorusRecv(&token, 1, chorusInt32, 0, comm, nullptr), chorusSuccess);
          EXPECT_EQ(token, 42);
        }
        ASSERT_EQ(chorusCommWindowDeregister(comm, win), chorusSuccess) << chorusGetLastError(comm);
      },
      kDeadline, configFor(GetParam()));
}

// Every rank puts 2 MiB into every other rank's window before any of them waits: more than a socket or a ring
// holds, so each put completes only because the puts' own progress lands what the others put meanwhile.
TEST_P(Windows, LargePutsBothWaysBeforeAnyWait) {
  for (int n = 2; n <= 5; n += 3) {
    runThreadWorld(
        n,
        [&](chorusComm_t comm, int rank) {
          constexpr size_t kBlock = 2 << 20;
          WindowVector<uint8_t> mine(kBlock * static_cast<size_t>(n), 0);
          std::vector<uint8_t> out(kBlock);
          chorusWindow_t win = nullptr;
          ASSERT_EQ(chorusCommWindowRegister(comm, mine.data(), mine.size(), &win, 0), chorusSuccess)
              << chorusGetLastError(comm);
          for (int k = 1; k < n; ++k) {
            const int to = (rank + k) % n;
            for (size_t i = 0; i < kBlock; ++i) out[i] = byteOf(rank, to, i);
            ASSERT_EQ(chorusPutSignal(out.data(), kBlock, chorusUint8, to, win, kBlock * static_cast<size_t>(rank), 7,
                                      0, 0, comm, nullptr),
                      chorusSuccess)
                << chorusGetLastError(comm);
          }
          for (int k = 1; k < n; ++k) {
            const int from = (rank + n - k) % n;
            chorusWaitSignalDesc_t d{.opCnt = 1, .peer = from, .sigIdx = 7, .ctx = 0};
            ASSERT_EQ(chorusWaitSignal(1, &d, comm, nullptr), chorusSuccess) << chorusGetLastError(comm);
            for (size_t i = 0; i < kBlock; ++i) {
              ASSERT_EQ(mine[kBlock * static_cast<size_t>(from) + i], byteOf(from, rank, i)) << "from " << from;
            }
          }
          ASSERT_EQ(chorusCommWindowDeregister(comm, win), chorusSuccess) << chorusGetLastError(comm);
        },
        kDeadline, configFor(GetParam()));
  }
}

// A put past the peer's window is chorusInvalidArgument naming rank, peer and the window's size; a CUDA stream is
// refused (windows take host memory); a wait for a signal from itself that was never raised is refused.
TEST_P(Windows, BoundsAndUnsupportedUsesAreRefused) {
  runThreadWorld(
      2,
      [&](chorusComm_t comm, int rank) {
        WindowVector<uint8_t> mine(rank == 0 ? 100 : 64);
        chorusWindow_t win = nullptr;
        ASSERT_EQ(chorusCommWindowRegister(comm, mine.data(), mine.size(), &win, 0), chorusSuccess);
        std::vector<uint8_t> out(65);
        const int peer = 1 - rank;
        const size_t peerSize = rank == 0 ? 64 : 100;
        EXPECT_EQ(chorusPutSignal(out.data(), peerSize - 9, chorusUint8, peer, win, 10, 0, 0, 0, comm, nullptr),
                  chorusInvalidArgument);
        const std::string error = chorusGetLastError(comm);
        EXPECT_NE(error.find("rank " + std::to_string(rank)), std::string::npos) << error;
        EXPECT_NE(error.find("peer " + std::to_string(peer)), std::string::npos) << error;
        EXPECT_NE(error.find(std::to_string(peerSize) + " bytes"), std::string::npos) << error;
        EXPECT_EQ(chorusPutSignal(out.data(), 1, chorusUint8, peer, win, 0, 0, 0, 0, comm, out.data()),
                  chorusInvalidUsage);
        chorusWaitSignalDesc_t self{.opCnt = 1, .peer = rank, .sigIdx = 0, .ctx = 0};
        EXPECT_EQ(chorusWaitSignal(1, &self, comm, nullptr), chorusInvalidUsage);
        ASSERT_EQ(chorusCommWindowDeregister(comm, win), chorusSuccess) << chorusGetLastError(comm);
      },
      kDeadline, configFor(GetParam()));
}

// A wait for a signal that never comes ends at the communicator's timeout with chorusTimeout naming the peer; the
// peer meanwhile makes no call (it waits, outside the library, until the wait has failed).
TEST_P(Windows, WaitForASignalNeverRaisedTimesOut) {
  Config config = configFor(GetParam());
  config.timeoutSeconds = 2;
  std::atomic<bool> waited{false};
  runThreadWorld(
      2,
      [&](chorusComm_t comm, int rank) {
        WindowVector<uint8_t> mine(16);
        chorusWindow_t win = nullptr;
        ASSERT_EQ(chorusCommWindowRegister(comm, mine.data(), mine.size(), &win, 0), chorusSuccess);
        if (rank == 0) {
          chorusWaitSignalDesc_t d{.opCnt = 1, .peer = 1, .sigIdx = 9, .ctx = 0};
          EXPECT_EQ(chorusWaitSignal(1, &d, comm, nullptr), chorusTimeout);
          const std::string error = chorusGetLastError(nullptr);
          EXPECT_NE(error.find("rank 1"), std::string::npos) << error;
          EXPECT_NE(error.find("chorusWaitSignal"), std::string::npos) << error;
          waited.store(true);
          waited.notify_one();
        } else {
          waited.wait(false);
        }
        ASSERT_EQ(chorusBarrier(comm, nullptr), chorusSuccess) << chorusGetLastError(comm);
        ASSERT_EQ(chorusCommWindowDeregister(comm, win), chorusSuccess) << chorusGetLastError(comm);
      },
      kDeadline, config);
}

// Inside a group a rank's puts and signals go first, then its sends and receives, then its waits: a group that
// puts to its peer, trades a message with it and waits for the peer's put completes on both ranks. On a host
// stream the same calls are queued and run in order; chorusStreamSynchronize returns once they have.
TEST_P(Windows, GroupsAndHostStreams) {
  runThreadWorld(
      2,
      [&](chorusComm_t comm, int rank) {
        constexpr size_t kCount = 300000;
        const int peer = 1 - rank;
        WindowVector<int32_t> mine(2 * kCount, -1);
        std::vector<int32_t> out(kCount);
        for (size_t i = 0; i < kCount; ++i) out[i] = rank * 1000000 + static_cast<int32_t>(i);
        chorusWindow_t win = nullptr;
        ASSERT_EQ(chorusCommWindowRegister(comm, mine.data(), mine.size() * sizeof(int32_t), &win, 0), chorusSuccess);
        int32_t token = rank + 10, got = -1;
        chorusWaitSignalDesc_t d{.opCnt = 1, .peer = peer, .sigIdx = 0, .ctx = 0};
        // The wait is recorded first, yet runs last.
        ASSERT_EQ(chorusGroupStart(), chorusSuccess);
        ASSERT_EQ(chorusWaitSignal(1, &d, comm, nullptr), chorusSuccess);
        ASSERT_EQ(chorusRecv(&got, 1, chorusInt32, peer, comm, nullptr), chorusSuccess);
        ASSERT_EQ(chorusPutSignal(out.data(), kCount, chorusInt32, peer, win, 0, 0, 0, 0, comm, nullptr),
                  chorusSuccess);
        ASSERT_EQ(chorusSend(&token, 1, chorusInt32, peer, comm, nullptr), chorusSuccess);
        ASSERT_EQ(chorusGroupEnd(), chorusSuccess) << chorusGetLastError(comm);
        EXPECT_EQ(got, peer + 10);
        for (size_t i = 0; i < kCount; ++i) ASSERT_EQ(mine[i], peer * 1000000 + static_cast<int32_t>(i));
        // The same on a host stream, into the window's second half, with a bare signal after the put.
        chorusStream_t stream = nullptr;
        ASSERT_EQ(chorusHostStreamCreate(&stream), chorusSuccess);
        ASSERT_EQ(chorusPutSignal(out.data(), kCount, chorusInt32, peer, win, kCount * sizeof(int32_t), 1, 0, 0, comm,
                                  stream),
                  chorusSuccess);
        ASSERT_EQ(chorusSignal(peer, 2, 0, 0, comm, stream), chorusSuccess);
        chorusWaitSignalDesc_t both[2] = {{.opCnt = 1, .peer = peer, .sigIdx = 1, .ctx = 0},
                                          {.opCnt = 1, .peer = peer, .sigIdx = 2, .ctx = 0}};
        ASSERT_EQ(chorusWaitSignal(2, both, comm, stream), chorusSuccess);
        ASSERT_EQ(chorusStreamSynchronize(stream), chorusSuccess) << chorusGetLastError(nullptr);
        for (size_t i = 0; i < kCount; ++i) ASSERT_EQ(mine[kCount + i], peer * 1000000 + static_cast<int32_t>(i));
        ASSERT_EQ(chorusHostStreamDestroy(stream), chorusSuccess);
        ASSERT_EQ(chorusCommWindowDeregister(comm, win), chorusSuccess) << chorusGetLastError(comm);
      },
      kDeadline, configFor(GetParam()));
}

// A pipeline of stages: stage r takes an activation from r - 1, transforms it, hands it to r + 1, once by
// put/signal into the next stage's window and once by send/recv; both give the same result at the last stage.
TEST_P(Windows, PipelineHandOffMatchesSendRecv) {
  for (int n = 2; n <= 5; ++n) {
    runThreadWorld(
        n,
        [&](chorusComm_t comm, int rank) {
          constexpr size_t kCount = 50000;
          constexpr int kMicro = 4;
          WindowVector<float> inbox(kCount * kMicro);
          chorusWindow_t win = nullptr;
          ASSERT_EQ(chorusCommWindowRegister(comm, inbox.data(), inbox.size() * sizeof(float), &win, 0), chorusSuccess);
          auto stage = [&](std::vector<float>& x) {
            for (size_t i = 0; i < x.size(); ++i) x[i] = x[i] * 0.5f + static_cast<float>(rank + i % 11);
          };
          for (int m = 0; m < kMicro; ++m) {
            std::vector<float> a(kCount), b(kCount);
            if (rank == 0) {
              for (size_t i = 0; i < kCount; ++i) a[i] = b[i] = static_cast<float>(m * 3 + static_cast<int>(i % 101));
            } else {
              chorusWaitSignalDesc_t d{.opCnt = 1, .peer = rank - 1, .sigIdx = 0, .ctx = 0};
              ASSERT_EQ(chorusWaitSignal(1, &d, comm, nullptr), chorusSuccess) << chorusGetLastError(comm);
              std::memcpy(a.data(), inbox.data() + m * kCount, kCount * sizeof(float));
              ASSERT_EQ(chorusRecv(b.data(), kCount, chorusFloat32, rank - 1, comm, nullptr), chorusSuccess);
            }
            stage(a);
            stage(b);
            if (rank + 1 < n) {
              ASSERT_EQ(chorusPutSignal(a.data(), kCount, chorusFloat32, rank + 1, win, m * kCount * sizeof(float), 0,
                                        0, 0, comm, nullptr),
                        chorusSuccess)
                  << chorusGetLastError(comm);
              ASSERT_EQ(chorusSend(b.data(), kCount, chorusFloat32, rank + 1, comm, nullptr), chorusSuccess);
            } else {
              ASSERT_EQ(a, b) << "micro-batch " << m;
            }
          }
          ASSERT_EQ(chorusCommWindowDeregister(comm, win), chorusSuccess) << chorusGetLastError(comm);
        },
        kDeadline, configFor(GetParam()));
  }
}

// MoE-style dispatch with uneven counts: rank r sends count(r, j) tokens to expert rank j, by put/signal into j's
// window at the offset its counts give, and by alltoallv; the receivers' buffers agree.
TEST_P(Windows, UnevenDispatchMatchesAllToAllv) {
  for (int n = 2; n <= 5; ++n) {
    runThreadWorld(
        n,
        [&](chorusComm_t comm, int rank) {
          auto count = [](int from, int to) { return static_cast<size_t>((from * 7 + to * 13) % 5 * 700 + to); };
          const size_t un = static_cast<size_t>(n);
          std::vector<size_t> sc(un), sd(un), rc(un), rd(un);
          size_t st = 0, rt = 0;
          for (int j = 0; j < n; ++j) {
            sc[j] = count(rank, j), sd[j] = st, st += sc[j];
            rc[j] = count(j, rank), rd[j] = rt, rt += rc[j];
          }
          std::vector<int32_t> send(st);
          for (int j = 0; j < n; ++j) {
            for (size_t i = 0; i < sc[j]; ++i) send[sd[j] + i] = rank * 1000000 + j * 10000 + static_cast<int>(i);
          }
          WindowVector<int32_t> viaPut(rt, -1);
          std::vector<int32_t> viaAllToAll(rt, -2);
          chorusWindow_t win = nullptr;
          ASSERT_EQ(chorusCommWindowRegister(comm, viaPut.data(), rt * sizeof(int32_t), &win, 0), chorusSuccess);
          // Senders take turns (see the first test); each expert waits for one signal per sender.
          for (int from = 0; from < n; ++from) {
            if (rank == from) {
              for (int j = 0; j < n; ++j) {
                // Rank j's receive displacement for this sender: the sum of count(k, j) for k < rank.
                size_t off = 0;
                for (int k = 0; k < rank; ++k) off += count(k, j);
                ASSERT_EQ(chorusPutSignal(send.data() + sd[j], sc[j], chorusInt32, j, win, off * sizeof(int32_t), 3, 1,
                                          0, comm, nullptr),
                          chorusSuccess)
                    << chorusGetLastError(comm);
              }
            } else {
              chorusWaitSignalDesc_t d{.opCnt = 1, .peer = from, .sigIdx = 3, .ctx = 1};
              ASSERT_EQ(chorusWaitSignal(1, &d, comm, nullptr), chorusSuccess) << chorusGetLastError(comm);
            }
          }
          chorusWaitSignalDesc_t self{.opCnt = 1, .peer = rank, .sigIdx = 3, .ctx = 1};
          ASSERT_EQ(chorusWaitSignal(1, &self, comm, nullptr), chorusSuccess);
          ASSERT_EQ(chorusAllToAllv(send.data(), sc.data(), sd.data(), viaAllToAll.data(), rc.data(), rd.data(),
                                    chorusInt32, comm, nullptr),
                    chorusSuccess)
              << chorusGetLastError(comm);
          EXPECT_EQ(std::vector<int32_t>(viaPut.begin(), viaPut.end()), viaAllToAll);
          ASSERT_EQ(chorusCommWindowDeregister(comm, win), chorusSuccess) << chorusGetLastError(comm);
        },
        kDeadline, configFor(GetParam()));
  }
}

// chorusCommAbort from another thread returns a rank blocked in chorusWaitSignal within a second, with
// chorusRemoteError saying it was aborted.
TEST(WindowsAbort, AbortReturnsABlockedWait) {
  chorusUniqueId id;
  ASSERT_EQ(chorusGetUniqueId(&id), chorusSuccess);
  chorusConfig_t config = CHORUS_CONFIG_INITIALIZER;
  config.timeoutSeconds = 60;
  std::vector<chorusComm_t> comms(2, nullptr);
  std::vector<chorusWindow_t> wins(2, nullptr);
  std::vector<std::vector<uint8_t>> mem(2, std::vector<uint8_t>(64));
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      ASSERT_EQ(chorusCommInitRankConfig(&comms[r], 2, id, r, &config), chorusSuccess) << r;
      ASSERT_EQ(chorusCommWindowRegister(comms[r], mem[r].data(), mem[r].size(), &wins[r], 0), chorusSuccess) << r;
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_TRUE(comms[0] && comms[1] && wins[0] && wins[1]);
  chorusComm_t victim = comms[0];
  auto call = std::async(std::launch::async, [victim] {
    chorusWaitSignalDesc_t d{.opCnt = 1, .peer = 1, .sigIdx = 0, .ctx = 0};
    const chorusResult_t r = chorusWaitSignal(1, &d, victim, nullptr);
    return std::make_pair(r, std::string(chorusGetLastError(nullptr)));
  });
  // Abort only once the wait is inside the communicator (earlier would free it under the caller).
  const auto start = std::chrono::steady_clock::now();
  while (!victim->impl->callInProgress()) {
    ASSERT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10)) << "the wait never started";
    std::this_thread::yield();
  }
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(chorusCommAbort(victim), chorusSuccess);
  ASSERT_EQ(call.wait_for(std::chrono::seconds(5)), std::future_status::ready) << "the wait did not return";
  const auto [result, error] = call.get();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
  EXPECT_EQ(result, chorusRemoteError) << error;
  EXPECT_NE(error.find("aborted"), std::string::npos) << error;
  chorusCommDestroy(comms[1]);
}

INSTANTIATE_TEST_SUITE_P(Transports, Windows, ::testing::Values("", "tcp", "memalloc"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(*info.param ? info.param : "shm");
                         });

}  // namespace
}  // namespace chorus::test
