// Send, receive and groups: NCCL's semantics (matching in call order per pair, any count, self sends in a group,
// groups that cannot deadlock whatever the pattern, nesting, spanning communicators) and the errors around them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "tests/collectives/suite_knobs.h"
#include "tests/harness/thread_world.h"

namespace chorus::test {
namespace {

constexpr std::chrono::seconds kDeadline{120};

// A value that names who sent it, to whom, in which call, at which element.
float tagged(int from, int to, int call, size_t i) {
  return static_cast<float>(from * 1000000 + to * 10000 + call * 100) + static_cast<float>(i % 97);
}

std::vector<float> payload(int from, int to, int call, size_t count) {
  std::vector<float> v(count);
  for (size_t i = 0; i < count; ++i) v[i] = tagged(from, to, call, i);
  return v;
}

// A second communicator over the same ranks: rank 0 makes the id and broadcasts it over the first.
chorusComm_t secondComm(chorusComm_t comm, int rank, int n) {
  chorusUniqueId id{};
  if (rank == 0) {
    EXPECT_EQ(chorusGetUniqueId(&id), chorusSuccess);
  }
  EXPECT_EQ(chorusBroadcast(&id, &id, sizeof(id), chorusUint8, 0, comm, nullptr), chorusSuccess);
  chorusComm_t other = nullptr;
  chorusConfig_t config = CHORUS_CONFIG_INITIALIZER;
  config.timeoutSeconds = 30;
  EXPECT_EQ(chorusCommInitRankConfig(&other, n, id, rank, &config), chorusSuccess) << chorusGetLastError(nullptr);
  return other;
}

TEST(PointToPoint, BlockingPairsOfEverySize) {
  runThreadWorld(
      2,
      [](chorusComm_t comm, int rank) {
        int call = 0;
        for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{4096}, size_t{1} << 20, (size_t{3} << 20) + 5}) {
          ++call;
          if (rank == 0) {
            std::vector<float> out = payload(0, 1, call, count);
            ASSERT_EQ(chorusSend(out.data(), count, chorusFloat32, 1, comm, nullptr), chorusSuccess)
                << chorusGetLastError(comm);
          } else {
            std::vector<float> in(count, -1.0f);
            ASSERT_EQ(chorusRecv(in.data(), count, chorusFloat32, 0, comm, nullptr), chorusSuccess)
                << chorusGetLastError(comm);
            EXPECT_EQ(in, payload(0, 1, call, count)) << "count " << count;
          }
        }
      },
      kDeadline, suiteConfig());
}

// Receives from any rank (chorusRecvAny), over shared memory and over TCP: rank 0 takes every other rank's three
// messages in whatever order they come, each sender's in its own order, learning who sent each; the last ones
// through a host stream. Inside a group or without `source` the call is refused.
TEST(PointToPoint, ReceivesFromAnyRankTakeEachSendersMessagesInOrder) {
  for (const char* transports : {"", "tcp"}) {
    Config config = suiteConfig();
    config.transports = transports;
    const int n = 4, perSender = 3;
    const size_t kCount = 70000;  // 280 KB: shared memory's single-copy path
    runThreadWorld(
        n,
        [&](chorusComm_t comm, int rank) {
          if (rank != 0) {
            for (int k = 0; k < perSender; ++k) {
              std::vector<int32_t> out(kCount, rank * 100 + k);
              ASSERT_EQ(chorusSend(out.data(), out.size(), chorusInt32, 0, comm, nullptr), chorusSuccess)
                  << chorusGetLastError(comm);
            }
            return;
          }
          int source = 0;
          int32_t one = 0;
          EXPECT_EQ(chorusRecvAny(&one, 1, chorusInt32, nullptr, comm, nullptr), chorusInvalidArgument);
          ASSERT_EQ(chorusGroupStart(), chorusSuccess);
          EXPECT_EQ(chorusRecvAny(&one, 1, chorusInt32, &source, comm, nullptr), chorusInvalidUsage);
          chorusGroupEnd();
          std::vector<int> taken(n, 0);
          chorusStream_t stream = nullptr;
          ASSERT_EQ(chorusHostStreamCreate(&stream), chorusSuccess);
          for (int m = 0; m < (n - 1) * perSender; ++m) {
            std::vector<int32_t> in(kCount, -1);
            source = -7;
            const bool queued = m >= (n - 1) * perSender - 2;
            ASSERT_EQ(chorusRecvAny(in.data(), kCount, chorusInt32, &source, comm, queued ? stream : nullptr),
                      chorusSuccess)
                << chorusGetLastError(comm);
            if (queued) {
              ASSERT_EQ(chorusStreamSynchronize(stream), chorusSuccess) << chorusGetLastError(nullptr);
            }
            ASSERT_GE(source, 1);
            ASSERT_LT(source, n);
            EXPECT_EQ(in.front(), source * 100 + taken[static_cast<size_t>(source)]) << "message " << m;
            EXPECT_EQ(in.back(), in.front());
            ++taken[static_cast<size_t>(source)];
          }
          EXPECT_EQ(taken, std::vector<int>({0, perSender, perSender, perSender}));
          chorusHostStreamDestroy(stream);
        },
        kDeadline, config);
  }
}

// Every rank sends a large message to the next and receives from the previous, in one group: without the group
// every rank would block in its send.
TEST(PointToPoint, GroupedRingOfLargeMessagesCannotDeadlock) {
  for (int n : {2, 3, 5}) {
    runThreadWorld(
        n,
        [n](chorusComm_t comm, int rank) {
          const size_t count = size_t{4} << 20;
          const int to = (rank + 1) % n, from = (rank - 1 + n) % n;
          std::vector<float> out = payload(rank, to, 1, count), in(count);
          ASSERT_EQ(chorusGroupStart(), chorusSuccess);
          ASSERT_EQ(chorusSend(out.data(), count, chorusFloat32, to, comm, nullptr), chorusSuccess);
          ASSERT_EQ(chorusRecv(in.data(), count, chorusFloat32, from, comm, nullptr), chorusSuccess);
          ASSERT_EQ(chorusGroupEnd(), chorusSuccess) << chorusGetLastError(comm);
          EXPECT_EQ(in, payload(from, rank, 1, count));
        },
        kDeadline, suiteConfig());
  }
}

// An alltoall made of sends and receives, several to each peer, receives posted before sends on odd ranks, and the
// rank's own blocks sent to itself.
TEST(PointToPoint, AllToAllFromSendsAndReceivesWithSelf) {
  const int n = 4;
  runThreadWorld(
      n,
      [](chorusComm_t comm, int rank) {
        const size_t count = 3000;
        std::vector<std::vector<float>> out, in;
        for (int p = 0; p < n; ++p) {
          for (int k = 0; k < 2; ++k) {
            out.push_back(payload(rank, p, k, count + static_cast<size_t>(k)));
            in.push_back(std::vector<float>(count + static_cast<size_t>(k), -1.0f));
          }
        }
        ASSERT_EQ(chorusGroupStart(), chorusSuccess);
        auto post = [&](bool sends) {
          for (int p = 0; p < n; ++p) {
            for (int k = 0; k < 2; ++k) {
              const size_t i = static_cast<size_t>(p * 2 + k);
              const chorusResult_t r =
                  sends ? chorusSend(out[i].data(), out[i].size(), chorusFloat32, p, comm, nullptr)
                        : chorusRecv(in[i].data(), in[i].size(), chorusFloat32, p, comm, nullptr);
              ASSERT_EQ(r, chorusSuccess) << chorusGetLastError(comm);
            }
          }
        };
        post(rank % 2 == 0);
        post(rank % 2 != 0);
        ASSERT_EQ(chorusGroupEnd(), chorusSuccess) << chorusGetLastError(comm);
        for (int p = 0; p < n; ++p) {
          for (int k = 0; k < 2; ++k) {
            EXPECT_EQ(in[static_cast<size_t>(p * 2 + k)], payload(p, rank, k, count + static_cast<size_t>(k)))
                << "from " << p << " call " << k;
          }
        }
      },
      kDeadline, suiteConfig());
}

TEST(PointToPoint, NestedGroupsRunAtTheOutermostEnd) {
  runThreadWorld(
      2,
      [](chorusComm_t comm, int rank) {
        const int peer = 1 - rank;
        std::vector<float> out = payload(rank, peer, 1, 100000), in(100000);
        std::vector<float> sum(10, 1.0f);
        ASSERT_EQ(chorusGroupStart(), chorusSuccess);
        ASSERT_EQ(chorusGroupStart(), chorusSuccess);
        ASSERT_EQ(chorusSend(out.data(), out.size(), chorusFloat32, peer, comm, nullptr), chorusSuccess);
        ASSERT_EQ(chorusGroupEnd(), chorusSuccess);
        ASSERT_EQ(chorusAllReduce(sum.data(), sum.data(), sum.size(), chorusFloat32, chorusSum, comm, nullptr),
                  chorusSuccess);
        EXPECT_EQ(sum[0], 1.0f) << "a call inside a group must not run before the outermost chorusGroupEnd";
        ASSERT_EQ(chorusRecv(in.data(), in.size(), chorusFloat32, peer, comm, nullptr), chorusSuccess);
        ASSERT_EQ(chorusGroupEnd(), chorusSuccess) << chorusGetLastError(comm);
        EXPECT_EQ(in, payload(peer, rank, 1, 100000));
        EXPECT_EQ(sum[0], 2.0f);
      },
      kDeadline, suiteConfig());
}

// Rank 0's group sends on communicator A and receives on B; rank 1's the other way round, in the other order. Run
// one communicator after the other in the order each rank recorded them, they would deadlock on large messages.
TEST(PointToPoint, GroupSpanningTwoCommunicators) {
  runThreadWorld(
      2,
      [](chorusComm_t comm, int rank) {
        chorusComm_t other = secondComm(comm, rank, 2);
        ASSERT_NE(other, nullptr);
        const size_t count = size_t{2} << 20;
        const int peer = 1 - rank;
        std::vector<float> out = payload(rank, peer, 1, count), in(count);
        std::vector<int32_t> ones(1000, 1);
        ASSERT_EQ(chorusGroupStart(), chorusSuccess);
        if (rank == 0) {
          ASSERT_EQ(chorusSend(out.data(), count, chorusFloat32, peer, comm, nullptr), chorusSuccess);
          ASSERT_EQ(chorusAllReduce(ones.data(), ones.data(), ones.size(), chorusInt32, chorusSum, other, nullptr),
                    chorusSuccess);
          ASSERT_EQ(chorusRecv(in.data(), count, chorusFloat32, peer, other, nullptr), chorusSuccess);
        } else {
          ASSERT_EQ(chorusSend(out.data(), count, chorusFloat32, peer, other, nullptr), chorusSuccess);
          ASSERT_EQ(chorusAllReduce(ones.data(), ones.data(), ones.size(), chorusInt32, chorusSum, other, nullptr),
                    chorusSuccess);
          ASSERT_EQ(chorusRecv(in.data(), count, chorusFloat32, peer, comm, nullptr), chorusSuccess);
        }
        ASSERT_EQ(chorusGroupEnd(), chorusSuccess) << chorusGetLastError(nullptr);
        EXPECT_EQ(in, payload(peer, rank, 1, count));
        EXPECT_EQ(ones[999], 2);
        EXPECT_EQ(chorusCommDestroy(other), chorusSuccess);
      },
      kDeadline, suiteConfig());
}

TEST(PointToPoint, UsageErrors) {
  runThreadWorld(
      2,
      [](chorusComm_t comm, int rank) {
        float x = 1.0f;
        EXPECT_EQ(chorusGroupEnd(), chorusInvalidUsage);
        EXPECT_NE(std::string(chorusGetLastError(nullptr)).find("without a chorusGroupStart"), std::string::npos);
        EXPECT_EQ(chorusSend(&x, 1, chorusFloat32, rank, comm, nullptr), chorusInvalidUsage);
        EXPECT_NE(std::string(chorusGetLastError(nullptr)).find("itself outside a group"), std::string::npos);
        EXPECT_EQ(chorusSend(&x, 1, chorusFloat32, 2, comm, nullptr), chorusInvalidArgument);
        EXPECT_EQ(chorusRecv(nullptr, 1, chorusFloat32, 0, comm, nullptr), chorusInvalidArgument);
        EXPECT_EQ(chorusSend(&x, SIZE_MAX / 2, chorusFloat32, 0, comm, nullptr), chorusInvalidArgument);
        // A failed call drops its group: chorusGroupEnd says so and runs nothing (the peer's group is dropped too).
        ASSERT_EQ(chorusGroupStart(), chorusSuccess);
        EXPECT_EQ(chorusSend(&x, 1, chorusFloat32, 1 - rank, comm, nullptr), chorusSuccess);
        EXPECT_EQ(chorusRecv(&x, 1, chorusFloat32, 7, comm, nullptr), chorusInvalidArgument);
        EXPECT_EQ(chorusGroupEnd(), chorusInvalidUsage);
        EXPECT_NE(std::string(chorusGetLastError(nullptr)).find("dropped"), std::string::npos);
        // Self pairs that do not match, in a group.
        ASSERT_EQ(chorusGroupStart(), chorusSuccess);
        EXPECT_EQ(chorusSend(&x, 1, chorusFloat32, rank, comm, nullptr), chorusSuccess);
        EXPECT_EQ(chorusGroupEnd(), chorusInvalidUsage);
        EXPECT_NE(std::string(chorusGetLastError(comm)).find("no matching receive"), std::string::npos)
            << chorusGetLastError(comm);
      },
      kDeadline, suiteConfig());
}

// A receive expecting more than the peer sends fails on the receiving rank with both sizes named, and the sending
// rank's next call fails too, saying its peer gave up.
TEST(PointToPoint, SizeMismatchFailsOnBothRanks) {
  runThreadWorld(
      2,
      [](chorusComm_t comm, int rank) {
        std::vector<float> buf(12, 1.0f);
        if (rank == 0) {
          const chorusResult_t sent = chorusSend(buf.data(), 10, chorusFloat32, 1, comm, nullptr);
          const chorusResult_t next =
              chorusAllReduce(buf.data(), buf.data(), 1, chorusFloat32, chorusSum, comm, nullptr);
          EXPECT_TRUE(sent != chorusSuccess || next != chorusSuccess) << "the sender never heard of the mismatch";
        } else {
          EXPECT_NE(chorusRecv(buf.data(), 12, chorusFloat32, 0, comm, nullptr), chorusSuccess);
          const std::string why = chorusGetLastError(comm);
          EXPECT_NE(why.find("40"), std::string::npos) << why;
          EXPECT_NE(why.find("48"), std::string::npos) << why;
          EXPECT_NE(why.find("rank 0"), std::string::npos) << why;
        }
      },
      kDeadline, suiteConfig());
}

// Alltoallv's ranks must agree pairwise: rank 0 sends 5 elements to rank 1, which expects 7. Both ranks fail, with
// the sizes named on the receiving side; neither hangs, and nothing is written past the 7 elements.
TEST(PointToPoint, AlltoallvDisagreementFailsOnBothRanks) {
  runThreadWorld(
      2,
      [](chorusComm_t comm, int rank) {
        std::vector<float> send(16, 1.0f), recv(16, -1.0f);
        size_t sendCounts[2] = {2, rank == 0 ? size_t{5} : size_t{3}};
        size_t recvCounts[2] = {2, rank == 1 ? size_t{7} : size_t{3}};
        size_t sendDispls[2] = {0, 4}, recvDispls[2] = {0, 4};
        if (rank == 1) std::swap(sendCounts[0], sendCounts[1]), std::swap(recvCounts[0], recvCounts[1]);
        const chorusResult_t r = chorusAllToAllv(send.data(), sendCounts, sendDispls, recv.data(), recvCounts,
                                                 recvDispls, chorusFloat32, comm, nullptr);
        int64_t one = 1;
        const chorusResult_t next = chorusAllReduce(&one, &one, 1, chorusInt64, chorusSum, comm, nullptr);
        EXPECT_TRUE(r != chorusSuccess || next != chorusSuccess) << "rank " << rank << " never heard of it";
        if (rank == 1) {
          EXPECT_NE(r, chorusSuccess);
          const std::string why = chorusGetLastError(comm);
          EXPECT_NE(why.find("rank 0"), std::string::npos) << why;
        }
        for (size_t i = 11; i < recv.size(); ++i) EXPECT_EQ(recv[i], -1.0f) << "written past the receive at " << i;
      },
      kDeadline, suiteConfig());
}

// A thousand random calls in one group per round, over two communicators: sends and receives between random pairs
// (every rank draws the same plan), self pairs, and allreduces; every byte checked.
TEST(PointToPoint, RandomGroupSoak) {
  const int n = 3;
  runThreadWorld(
      n,
      [](chorusComm_t comm, int rank) {
        chorusComm_t other = secondComm(comm, rank, n);
        ASSERT_NE(other, nullptr);
        chorusComm_t comms[2] = {comm, other};
        for (int round = 0; round < 3; ++round) {
          std::mt19937 plan(1234 + round);
          struct Call {
            int kind;  // 0 point-to-point, 1 allreduce
            int from, to, comm;
            size_t count;
          };
          std::vector<Call> calls;
          for (int i = 0; i < 1000; ++i) {
            const uint32_t draw = plan() % 20;
            // 0 point-to-point (most), 1 allreduce, 2 broadcast from `from`, 3 alltoall (count per block)
            Call c{draw < 16 ? 0 : draw < 18 ? 1 : draw < 19 ? 2 : 3, static_cast<int>(plan() % n),
                   static_cast<int>(plan() % n), static_cast<int>(plan() % 2), static_cast<size_t>(plan() % 3000)};
            if (plan() % 50 == 0) c.count = 300000;
            calls.push_back(c);
          }
          std::vector<std::vector<float>> bufs(calls.size());
          ASSERT_EQ(chorusGroupStart(), chorusSuccess);
          for (size_t i = 0; i < calls.size(); ++i) {
            const Call& c = calls[i];
            const int id = static_cast<int>(i);
            if (c.kind == 1) {
              bufs[i].assign(c.count, static_cast<float>(rank + 1));
              ASSERT_EQ(chorusAllReduce(bufs[i].data(), bufs[i].data(), c.count, chorusFloat32, chorusSum,
                                        comms[c.comm], nullptr), chorusSuccess);
              continue;
            }
            if (c.kind == 2) {
              bufs[i] = rank == c.from ? payload(c.from, 0, id % 97, c.count) : std::vector<float>(c.count, -1.0f);
              ASSERT_EQ(chorusBroadcast(bufs[i].data(), bufs[i].data(), c.count, chorusFloat32, c.from, comms[c.comm],
                                        nullptr), chorusSuccess);
              continue;
            }
            if (c.kind == 3) {
              // Send blocks first, receive blocks after them.
              bufs[i].assign(2 * n * c.count, -1.0f);
              for (int p = 0; p < n; ++p) {
                std::vector<float> block = payload(rank, p, id % 97, c.count);
                std::copy(block.begin(), block.end(), bufs[i].begin() + static_cast<long>(p * c.count));
              }
              ASSERT_EQ(chorusAllToAll(bufs[i].data(), bufs[i].data() + n * c.count, c.count, chorusFloat32,
                                       comms[c.comm], nullptr), chorusSuccess);
              continue;
            }
            // Sent data first, then (a self pair) the landing after it: the buffer is sized before any call.
            if (rank == c.from) bufs[i] = payload(c.from, c.to, id % 97, c.count);
            if (rank == c.to) bufs[i].resize(bufs[i].size() + c.count + 1, -1.0f);
            if (rank == c.from) {
              ASSERT_EQ(chorusSend(bufs[i].data(), c.count, chorusFloat32, c.to, comms[c.comm], nullptr),
                        chorusSuccess);
            }
            if (rank == c.to) {
              float* at = rank == c.from ? bufs[i].data() + c.count + 1 : bufs[i].data();
              ASSERT_EQ(chorusRecv(at, c.count, chorusFloat32, c.from, comms[c.comm], nullptr), chorusSuccess);
            }
          }
          ASSERT_EQ(chorusGroupEnd(), chorusSuccess) << chorusGetLastError(nullptr);
          const float total = static_cast<float>(n * (n + 1) / 2);
          for (size_t i = 0; i < calls.size(); ++i) {
            const Call& c = calls[i];
            if (c.kind == 1) {
              for (size_t e = 0; e < c.count; ++e) ASSERT_EQ(bufs[i][e], total) << "allreduce " << i;
            } else if (c.kind == 2) {
              ASSERT_EQ(bufs[i], payload(c.from, 0, static_cast<int>(i) % 97, c.count)) << "broadcast " << i;
            } else if (c.kind == 3) {
              for (int p = 0; p < n; ++p) {
                std::vector<float> want = payload(p, rank, static_cast<int>(i) % 97, c.count);
                ASSERT_TRUE(
                    std::equal(want.begin(), want.end(), bufs[i].begin() + static_cast<long>((n + p) * c.count)))
                    << "alltoall " << i << " block from " << p;
              }
            } else if (rank == c.to) {
              const float* got = rank == c.from ? bufs[i].data() + c.count + 1 : bufs[i].data();
              std::vector<float> want = payload(c.from, c.to, static_cast<int>(i) % 97, c.count);
              ASSERT_EQ(std::memcmp(got, want.data(), c.count * sizeof(float)), 0) << "call " << i;
            }
          }
        }
        EXPECT_EQ(chorusCommDestroy(other), chorusSuccess);
      },
      kDeadline, suiteConfig());
}

TEST(PointToPoint, CppApi) {
  runThreadWorld(
      3,
      [](chorusComm_t handle, int rank) {
        const int n = 3;
        const int to = (rank + 1) % n, from = (rank + n - 1) % n;
        std::vector<int64_t> out(5, rank), in(5, -1);
        {
          // The public C++ API over the same handle: chorus::Group around send and recv.
          chorus::Group group;
          ASSERT_EQ(chorusSend(out.data(), out.size(), chorusInt64, to, handle, nullptr), chorusSuccess);
          ASSERT_EQ(chorusRecv(in.data(), in.size(), chorusInt64, from, handle, nullptr), chorusSuccess);
          group.end();
        }
        EXPECT_EQ(in[4], from);
        std::vector<int32_t> bits(4, 1 << rank);
        ASSERT_EQ(chorusAllReduce(bits.data(), bits.data(), bits.size(), chorusInt32, chorusBor, handle, nullptr),
                  chorusSuccess);
        EXPECT_EQ(bits[0], 7);
        float f = 1.0f;
        EXPECT_EQ(chorusAllReduce(&f, &f, 1, chorusFloat32, chorusBxor, handle, nullptr), chorusInvalidArgument);
        EXPECT_NE(std::string(chorusGetLastError(handle)).find("integer types only"), std::string::npos);
      },
      kDeadline, suiteConfig());
}

}  // namespace
}  // namespace chorus::test
