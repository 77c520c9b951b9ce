// Window puts over ib (WindowRdmaWrites): the immediate's encoding of (sigIdx, ctx), and on a pair of IbConnections
// over the software verbs device, RDMA writes straight into an exposed buffer, split at the port's largest message,
// whose immediates come out in order with the messages around them.
#include <gtest/gtest.h>

#include <cstring>
#include <utility>
#include <vector>

#include "src/comm/window_immediate.h"

#ifdef CHORUS_HAVE_VERBS
#include "tests/unit/device_test_support.h"
#include "tests/unit/ib_pair.h"
#endif

namespace chorus::test {
namespace {

TEST(WindowImmediateTest, SignalsRoundTripAndTheLargestOnesDoNotFit) {
  for (uint32_t sigIdx : {0u, 1u, 5u, 4095u, (1u << 20) - 1}) {
    for (uint32_t ctx : {0u, 1u, 2u, 1023u}) {
      ASSERT_TRUE(window_immediate::fits(sigIdx, ctx));
      const uint32_t imm = window_immediate::encode(sigIdx, ctx);
      EXPECT_LE(imm, (1u << 30) - 1);
      EXPECT_EQ(window_immediate::decode(imm), std::make_pair(sigIdx, ctx));
    }
  }
  EXPECT_NE(window_immediate::encode(1, 0), window_immediate::encode(0, 1));
  EXPECT_FALSE(window_immediate::fits(1u << 20, 0));
  EXPECT_FALSE(window_immediate::fits(0, 1024));
  EXPECT_FALSE(window_immediate::fits(0x7fffffffu, 0x7fffffffu));
}

#ifdef CHORUS_HAVE_VERBS
// Message, 5 MiB write (two writes: the software device's largest message is 4 MiB), message, bare signal, 8-byte
// write (inlined): the bytes land in the exposed buffer without a receive for them, and the immediates come out in
// order, each after the messages posted before it, only once those are received.
void writesInOrder(int lanes) {
  auto p = ibPair(lanes, false);
  WindowRdmaWrites* from = p.first->capabilities().windowRdma;
  WindowRdmaWrites* to = p.second->capabilities().windowRdma;
  ASSERT_NE(from, nullptr);
  ASSERT_NE(to, nullptr);
  constexpr size_t kBig = 5 << 20;
  std::vector<char> window(kBig + 64, 0), big(kBig);
  for (size_t i = 0; i < kBig; ++i) big[i] = static_cast<char>(i * 7 + i / 4099);
  uint32_t key = 0;
  void* token = to->exposeMemory(window.data(), window.size(), &key);
  const uint64_t base = reinterpret_cast<uint64_t>(window.data());
  char m0[100], m1[3000], r0[100] = {}, r1[3000] = {};
  std::memset(m0, 'a', sizeof(m0));
  std::memset(m1, 'b', sizeof(m1));
  const uint64_t small = 0x0102030405060708u;
  const uint32_t imm[3] = {123, 7, (1u << 30) - 1};
  p.first->isend(m0, sizeof(m0), 9);
  from->iwrite(big.data(), kBig, base + 32, key, &imm[0]);
  p.first->isend(m1, sizeof(m1), 9);
  from->iwrite(nullptr, 0, 0, 0, &imm[1]);
  const uint64_t last = from->iwrite(&small, sizeof(small), base + 8, key, &imm[2]);
  uint32_t got = 0;
  uint64_t before = 0;
  // No receive posted: the first message waits in the ring, and the immediates behind it with it.
  ASSERT_TRUE(drive(*p.first, *p.second, [&] { return p.first->sendsDone() > last && !from->writesInFlight(); }));
  EXPECT_FALSE(to->peekImmediate(&got, &before));
  EXPECT_EQ(0, std::memcmp(window.data() + 32, big.data(), kBig));  // the bytes are in already: the adapter wrote them
  EXPECT_EQ(0, std::memcmp(window.data() + 8, &small, sizeof(small)));
  p.second->irecv(r0, sizeof(r0), 9);
  ASSERT_TRUE(drive(*p.first, *p.second, [&] { return to->peekImmediate(&got, &before); }));
  EXPECT_EQ(got, 123u);
  EXPECT_EQ(before, 1u);
  to->popImmediate();
  EXPECT_FALSE(to->peekImmediate(&got, &before));  // behind the second message, not received yet
  p.second->irecv(r1, sizeof(r1), 9);
  std::vector<std::pair<uint32_t, uint64_t>> rest;
  ASSERT_TRUE(drive(*p.first, *p.second, [&] {
    while (to->peekImmediate(&got, &before)) rest.push_back({got, before}), to->popImmediate();
    return rest.size() == 2;
  }));
  EXPECT_EQ(rest[0], std::make_pair(7u, uint64_t{2}));
  EXPECT_EQ(rest[1], std::make_pair((1u << 30) - 1, uint64_t{2}));
  EXPECT_EQ(0, std::memcmp(r0, m0, sizeof(m0)));
  EXPECT_EQ(0, std::memcmp(r1, m1, sizeof(m1)));
  to->unexposeMemory(token);
}

TEST(WindowRdmaTest, WritesLandAndImmediatesComeInOrderWithMessages) { writesInOrder(1); }
TEST(WindowRdmaTest, WritesStayInOrderOnLaneZeroWithMessagesStripedOverTwoLanes) { writesInOrder(2); }

// Far more bare signals than the receiver keeps receives posted: each takes ring credits as a chunk would, so the
// sender waits for credits instead of overrunning the receives, and all arrive, in order.
TEST(WindowRdmaTest, ManySignalsWaitForCreditsAndAllArrive) {
  auto p = ibPair(1, false);
  WindowRdmaWrites* from = p.first->capabilities().windowRdma;
  WindowRdmaWrites* to = p.second->capabilities().windowRdma;
  constexpr int kSignals = 2000;
  uint64_t last = 0;
  for (int i = 0; i < kSignals; ++i) {
    const uint32_t imm = static_cast<uint32_t>(i);
    last = from->iwrite(nullptr, 0, 0, 0, &imm);
  }
  int seen = 0;
  uint32_t got = 0;
  uint64_t before = 0;
  ASSERT_TRUE(drive(*p.first, *p.second, [&] {
    while (to->peekImmediate(&got, &before)) {
      EXPECT_EQ(got, static_cast<uint32_t>(seen));
      EXPECT_EQ(before, 0u);
      ++seen;
      to->popImmediate();
    }
    return seen == kSignals && p.first->sendsDone() > last;
  }));
}
#endif  // CHORUS_HAVE_VERBS

}  // namespace
}  // namespace chorus::test
