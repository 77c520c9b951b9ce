// The shared-memory connection on its own: two ends made by two ShmTransports in this process, driven by hand.
// Ordering of many queued messages, zero-length and large odd-sized ones, back-pressure, both large-message
// paths, tag/size mismatches, goodbye vs abandon vs a vanished peer, and sleeping on the doorbell.
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/error.h"
#include "transports/shm/shm_transport.h"
#include "tests/harness/error_capture.h"
#include "tests/unit/shm_pair.h"

namespace chorus {
namespace {

using test::errorFrom;

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

struct Pair {
  std::unique_ptr<Connection> a;  // rank 0's end (to rank 1)
  std::unique_ptr<Connection> b;  // rank 1's end (to rank 0)
};

// Two connected ends through the real handshake (two transports, one thread each).
Pair makePair(size_t ring = 64 << 10, ShmCma cma = ShmCma::kOff, ShmTuning tuning = {}) {
  auto [a, b] = test::connectShmPair("shm-connection-test-", ring, cma, tuning);
  return Pair{std::move(a), std::move(b)};
}

// Progresses both ends in turn until done() holds; false after 20 s.
template <typename Done>
bool drive(Connection& a, Connection& b, Done done) {
  const auto until = Clock::now() + 20s;
  while (!done()) {
    if (Clock::now() > until) return false;
    a.progress();
    b.progress();
  }
  return true;
}

std::vector<char> pattern(size_t n, int seed) {
  std::vector<char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<char>((i * 131 + static_cast<size_t>(seed) * 7) & 0xff);
  return v;
}

TEST(ShmConnectionTest, DescribesItselfAndNamesThePeer) {
  Pair p = makePair(64 << 10, ShmCma::kAlways);
  EXPECT_EQ(p.a->peer(), 1);
  EXPECT_EQ(p.b->peer(), 0);
  EXPECT_EQ(std::string(p.a->describe()), "shm ring 64 KiB + cma");
}

// More messages than record slots, of every size class (inline, ring, ring pieces), queued all at once.
TEST(ShmConnectionTest, ManyQueuedMessagesCompleteInPostingOrder) {
  Pair p = makePair();
  const int n = 3000;
  std::vector<std::vector<char>> out(n), in(n);
  for (int i = 0; i < n; ++i) {
    size_t size = (i % 7 == 0) ? 0 : static_cast<size_t>((i * 37) % 300 + (i % 11 == 0 ? 70000 : 0));
    out[i] = pattern(size, i);
    in[i].assign(size, 0);
    EXPECT_EQ(p.a->isend(out[i].data(), size, 5), static_cast<uint64_t>(i));
  }
  for (int i = 0; i < n; ++i) EXPECT_EQ(p.b->irecv(in[i].data(), in[i].size(), 5), static_cast<uint64_t>(i));
  EXPECT_TRUE(p.a->busy());
  ASSERT_TRUE(drive(*p.a, *p.b, [&] { return p.b->recvsDone() == n && p.a->sendsDone() == n; }));
  for (int i = 0; i < n; ++i) ASSERT_EQ(in[i], out[i]) << "message " << i;
  EXPECT_FALSE(p.a->busy());
  EXPECT_FALSE(p.b->busy());
}

// Pieces of up to 256 bytes run on into the record slots after their own (shm_layout.h). Every size from 1 to 300,
// over many laps of the record array (so that some would wrap and take the byte ring instead), carrying 8-byte
// counters close to the record numbers: a continuation slot's payload must never pass for a record later.
TEST(ShmConnectionTest, InlinePiecesRunOnIntoTheFollowingSlots) {
  Pair p = makePair();
  const int n = 6000;
  std::vector<std::vector<char>> out(n), in(n);
  uint64_t counter = 0;
  for (int i = 0; i < n; ++i) {
    const size_t size = static_cast<size_t>(i % 300) + 1;
    out[i].assign(size, 0);
    for (size_t at = 0; at + sizeof(uint64_t) <= size; at += sizeof(uint64_t)) {
      ++counter;
      std::memcpy(out[i].data() + at, &counter, sizeof(counter));
    }
    in[i].assign(size, 0);
  }
  // Posted in batches, so the sender fills the record array and waits for slots again and again.
  int sent = 0, posted = 0;
  while (posted < n) {
    for (int k = 0; k < 700 && sent < n; ++k, ++sent) p.a->isend(out[sent].data(), out[sent].size(), 3);
    for (int k = 0; k < 700 && posted < n; ++k, ++posted) p.b->irecv(in[posted].data(), in[posted].size(), 3);
    ASSERT_TRUE(drive(*p.a, *p.b, [&] {
      return p.b->recvsDone() == static_cast<uint64_t>(posted) && p.a->sendsDone() == static_cast<uint64_t>(sent);
    }));
  }
  for (int i = 0; i < n; ++i) ASSERT_EQ(in[i], out[i]) << "message " << i << " of " << out[i].size() << " bytes";
}

TEST(ShmConnectionTest, ZeroLengthMessagesCompleteBothWays) {
  Pair p = makePair();
  for (int i = 0; i < 5; ++i) {
    p.a->isend(nullptr, 0, 9);
    p.b->isend(nullptr, 0, 9);
    p.a->irecv(nullptr, 0, 9);
    p.b->irecv(nullptr, 0, 9);
  }
  ASSERT_TRUE(drive(*p.a, *p.b, [&] { return !p.a->busy() && !p.b->busy(); }));
  EXPECT_EQ(p.a->recvsDone(), 5u);
  EXPECT_EQ(p.b->sendsDone(), 5u);
}

// A tiny exchange whose answer is already there completes inside exchange(), both ways of the pair intact.
TEST(ShmConnectionTest, TinyExchangeCompletesAtOnceWhenThePeerHasAnswered) {
  Pair p = makePair();
  const uint64_t mine = 0x1122334455667788, theirs = 0x99aabbccddeeff00;
  uint64_t gotA = 0, gotB = 0;
  p.b->isend(&theirs, sizeof(theirs), 3);
  p.b->irecv(&gotB, sizeof(gotB), 3);
  ASSERT_TRUE(drive(*p.b, *p.b, [&] { return p.b->sendsDone() == 1; }));
  uint64_t sendId = 99, recvId = 99;
  EXPECT_TRUE(p.a->exchange(&mine, &gotA, sizeof(mine), 3, 3, &sendId, &recvId));
  EXPECT_EQ(sendId, 0u);
  EXPECT_EQ(recvId, 0u);
  EXPECT_FALSE(p.a->busy());
  EXPECT_EQ(gotA, theirs);
  ASSERT_TRUE(drive(*p.a, *p.b, [&] { return !p.b->busy(); }));
  EXPECT_EQ(gotB, mine);
}

// Without an answer, or when it does not fit the fast path (too big, or behind other traffic), exchange() leaves
// both operations posted under the ids it returns, and progress completes them.
TEST(ShmConnectionTest, ExchangeNotAnsweredYetCompletesThroughProgress) {
  Pair p = makePair();
  for (size_t bytes : {size_t{8}, size_t{32}, size_t{33}, size_t{5000}}) {
    SCOPED_TRACE(bytes);
    std::vector<char> outA = pattern(bytes, 1), outB = pattern(bytes, 2), inA(bytes), inB(bytes);
    const uint64_t before = p.a->sendsDone();
    uint64_t sendId = 0, recvId = 0;
    EXPECT_FALSE(p.a->exchange(outA.data(), inA.data(), bytes, 4, 4, &sendId, &recvId));
    EXPECT_EQ(sendId, before);
    EXPECT_EQ(recvId, before);
    p.b->isend(outB.data(), bytes, 4);
    p.b->irecv(inB.data(), bytes, 4);
    ASSERT_TRUE(drive(*p.a, *p.b, [&] { return !p.a->busy() && !p.b->busy(); }));
    EXPECT_EQ(inA, outB);
    EXPECT_EQ(inB, outA);
  }
  // Behind a queued receive: posted in order, not answered early.
  uint64_t first = 0, x = 7, y = 0, z = 0, w = 8;
  p.a->irecv(&first, sizeof(first), 4);
  uint64_t sendId = 0, recvId = 0;
  EXPECT_FALSE(p.a->exchange(&x, &y, sizeof(x), 4, 4, &sendId, &recvId));
  p.b->isend(&w, sizeof(w), 4);
  p.b->isend(&w, sizeof(w), 4);
  p.b->irecv(&z, sizeof(z), 4);
  ASSERT_TRUE(drive(*p.a, *p.b, [&] { return !p.a->busy() && !p.b->busy(); }));
  EXPECT_EQ(first, 8u);
  EXPECT_EQ(y, 8u);
  EXPECT_EQ(z, 7u);
}

// Two threads trading 8-byte values through exchange() as a 2-rank allreduce does, each falling back to its own
// progress loop when the answer is late: every value arrives, in order.
TEST(ShmConnectionTest, ConcurrentTinyExchangesKeepEveryValueInOrder) {
  Pair p = makePair();
  const uint64_t n = 20000;
  auto side = [n](Connection& c, uint64_t salt) {
    const auto until = Clock::now() + 20s;
    for (uint64_t i = 0; i < n; ++i) {
      uint64_t out = i * 2 + salt, in = ~uint64_t{0}, sendId = 0, recvId = 0;
      if (!c.exchange(&out, &in, sizeof(out), 6, 6, &sendId, &recvId)) {
        while (c.busy()) {
          if (Clock::now() > until) return false;
          c.progress();
        }
      }
      if (in != i * 2 + (1 - salt)) return false;
    }
    return true;
  };
  auto other = std::async(std::launch::async, [&] { return side(*p.b, 1); });
  EXPECT_TRUE(side(*p.a, 0));
  EXPECT_TRUE(other.get());
}

class ShmLargeMessageTest : public ::testing::TestWithParam<bool> {};

// Far larger than the ring, of an odd size, both directions at once: through the ring, or by process_vm_readv.
TEST_P(ShmLargeMessageTest, NineMebibytesAndSomeArriveIntact) {
  const bool cma = GetParam();
  Pair p = makePair(1 << 20, cma ? ShmCma::kAlways : ShmCma::kOff);
  const size_t n = (9 << 20) + 12345;
  std::vector<char> ab = pattern(n, 1), ba = pattern(n, 2), atB(n, 0), atA(n, 0);
  p.a->isend(ab.data(), n, 1);
  p.b->isend(ba.data(), n, 1);
  p.b->irecv(atB.data(), n, 1);
  p.a->irecv(atA.data(), n, 1);
  ASSERT_TRUE(drive(*p.a, *p.b, [&] { return !p.a->busy() && !p.b->busy(); }));
  EXPECT_TRUE(atB == ab);
  EXPECT_TRUE(atA == ba);
}

INSTANTIATE_TEST_SUITE_P(Paths, ShmLargeMessageTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "ProcessVmReadv" : "Ring"; });

// A sender far ahead of its receiver fills the ring and stops there; nothing is lost or overwritten.
TEST(ShmConnectionTest, SenderFarAheadIsHeldBackByTheRing) {
  Pair p = makePair(64 << 10);
  const int n = 64;
  const size_t size = 10000;
  std::vector<std::vector<char>> out(n), in(n, std::vector<char>(size, 0));
  for (int i = 0; i < n; ++i) {
    out[i] = pattern(size, i);
    p.a->isend(out[i].data(), size, 2);
  }
  for (int round = 0; round < 1000; ++round) p.a->progress();
  // 64 KiB of ring holds at most six 10000-byte messages (and a sliver of the seventh).
  EXPECT_GE(p.a->sendsDone(), 5u);
  EXPECT_LE(p.a->sendsDone(), 7u);
  for (int i = 0; i < n; ++i) p.b->irecv(in[i].data(), size, 2);
  ASSERT_TRUE(drive(*p.a, *p.b, [&] { return p.b->recvsDone() == n; }));
  for (int i = 0; i < n; ++i) ASSERT_EQ(in[i], out[i]) << "message " << i;
}

// With process_vm_readv the receiver copies straight from the sender's buffer, so the send completes only once
// the receiver has read it.
TEST(ShmConnectionTest, AddressPublishedSendCompletesOnlyAfterTheRead) {
  ShmTuning tuning;
  tuning.cmaMinBytes = 4096;
  Pair p = makePair(64 << 10, ShmCma::kAlways, tuning);
  std::vector<char> out = pattern(100000, 3), in(100000, 0);
  p.a->isend(out.data(), out.size(), 4);
  for (int round = 0; round < 100; ++round) p.a->progress();
  EXPECT_EQ(p.a->sendsDone(), 0u);
  p.b->irecv(in.data(), in.size(), 4);
  ASSERT_TRUE(drive(*p.a, *p.b, [&] { return p.a->sendsDone() == 1 && p.b->recvsDone() == 1; }));
  EXPECT_EQ(in, out);
}

TEST(ShmConnectionTest, TagMismatchFailsFastNamingBothSides) {
  Pair p = makePair();
  std::vector<char> out(100, 1), in(100, 0);
  p.a->isend(out.data(), 100, 7);
  p.b->irecv(in.data(), 100, 8);
  Error e = errorFrom([&] { drive(*p.a, *p.b, [] { return false; }); });
  EXPECT_EQ(e.code(), chorusInvalidUsage) << e.what();
  EXPECT_NE(
      std::string(e.what()).find("rank 1, peer 0: the peer sent 100 bytes for call tag 7 where this rank expects 100 "
                                 "bytes for tag 8"),
      std::string::npos)
      << e.what();
}

TEST(ShmConnectionTest, SizeMismatchFailsBeforeWritingPastTheBuffer) {
  Pair p = makePair();
  std::vector<char> out(5000, 1), in(4000 + 64, 0);
  p.a->isend(out.data(), 5000, 3);
  p.b->irecv(in.data(), 4000, 3);
  Error e = errorFrom([&] { drive(*p.a, *p.b, [] { return false; }); });
  EXPECT_EQ(e.code(), chorusInvalidUsage) << e.what();
  EXPECT_NE(std::string(e.what()).find("sent 5000 bytes"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("expects 4000 bytes"), std::string::npos) << e.what();
  for (char c : in) ASSERT_EQ(c, 0);
}

// The hang-up descriptors of an end whose peer is gone, after polling them.
short hangupEvents(Connection& c) {
  std::vector<pollfd> fds;
  c.addHangupFds(fds);
  if (fds.empty()) return 0;
  EXPECT_EQ(::poll(fds.data(), fds.size(), 5000), 1);
  return fds[0].revents;
}

TEST(ShmConnectionTest, GoodbyeIsNotALoss) {
  Pair p = makePair();
  p.a->closeGracefully();
  p.a.reset();
  EXPECT_TRUE(hangupEvents(*p.b) & POLLRDHUP);
  EXPECT_NO_THROW(p.b->checkAlive());
  std::vector<pollfd> fds;
  p.b->addHangupFds(fds);
  EXPECT_TRUE(fds.empty()) << "a peer that said goodbye is not watched any more";
  // But a receive it will never answer fails at once, saying why.
  char x;
  p.b->irecv(&x, 1, 1);
  Error e = errorFrom([&] { p.b->progress(); });
  EXPECT_EQ(e.code(), chorusInvalidUsage) << e.what();
  EXPECT_NE(
      std::string(e.what()).find("peer 0: the peer destroyed its communicator while this rank still expected data"),
      std::string::npos)
      << e.what();
}

TEST(ShmConnectionTest, DataSentBeforeAGoodbyeIsStillDelivered) {
  Pair p = makePair();
  std::vector<char> out = pattern(200000, 5), in(200000, 0);
  p.a->isend(out.data(), 20, 1);
  while (p.a->busy()) p.a->progress();
  p.a->closeGracefully();
  p.a.reset();
  p.b->irecv(in.data(), 20, 1);
  EXPECT_TRUE(p.b->progress());
  EXPECT_EQ(p.b->recvsDone(), 1u);
  EXPECT_EQ(std::memcmp(in.data(), out.data(), 20), 0);
}

TEST(ShmConnectionTest, AbandonMakesTheBlockedPeerFailAtOnce) {
  Pair p = makePair();
  std::vector<char> in(64, 0);
  p.b->irecv(in.data(), 64, 1);
  EXPECT_FALSE(p.b->progress());
  p.a->abandon();
  p.a->abandon();  // idempotent
  Error e = errorFrom([&] { p.b->progress(); });
  EXPECT_EQ(e.code(), chorusRemoteError) << e.what();
  EXPECT_NE(std::string(e.what()).find("rank 1, peer 0: the peer gave up"), std::string::npos) << e.what();
  EXPECT_TRUE(hangupEvents(*p.b) & POLLRDHUP);
  Error alive = errorFrom([&] { p.b->checkAlive(); });
  EXPECT_NE(std::string(alive.what()).find("gave up"), std::string::npos) << alive.what();
}

TEST(ShmConnectionTest, AbandonedSenderIsNoticedByAPeerBlockedOnAFullRing) {
  Pair p = makePair(64 << 10);
  std::vector<char> big(1 << 20, 1), sink(1 << 20);
  p.b->isend(big.data(), big.size(), 1);  // rank 1 -> rank 0, never received
  for (int i = 0; i < 100; ++i) p.b->progress();
  EXPECT_EQ(p.b->sendsDone(), 0u);
  p.a->abandon();
  Error e = errorFrom([&] { p.b->progress(); });
  EXPECT_NE(std::string(e.what()).find("gave up"), std::string::npos) << e.what();
}

TEST(ShmConnectionTest, APeerThatVanishesWithoutAGoodbyeIsLost) {
  Pair p = makePair();
  p.a.reset();  // no closeGracefully: as if its process had died
  EXPECT_TRUE(hangupEvents(*p.b) & POLLRDHUP);
  Error e = errorFrom([&] { p.b->checkAlive(); });
  EXPECT_EQ(e.code(), chorusRemoteError) << e.what();
  EXPECT_NE(std::string(e.what()).find("rank 1, peer 0: lost connection (shm"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("vanished without a goodbye"), std::string::npos) << e.what();
}

// A receiver asleep in poll on its descriptor is woken by the sender's doorbell, not by the poll timeout.
TEST(ShmConnectionTest, SleepingReceiverIsWokenByTheDoorbell) {
  Pair p = makePair();
  uint64_t value = 0;
  p.b->irecv(&value, sizeof(value), 1);
  std::atomic<bool> asleep{false};
  auto receiver = std::async(std::launch::async, [&] {
    int sleeps = 0;
    while (p.b->recvsDone() == 0) {
      if (p.b->progress()) continue;
      std::vector<pollfd> fds;
      p.b->addPollFds(fds);
      EXPECT_EQ(fds.size(), 1u);
      asleep = true;
      ::poll(fds.data(), fds.size(), 30000);
      ++sleeps;
    }
    return sleeps;
  });
  // Send only once the receiver has raised its flag (whether or not it is inside poll yet, it must wake).
  const auto armedBy = Clock::now() + 10s;
  while (!asleep && Clock::now() < armedBy) std::this_thread::yield();
  ASSERT_TRUE(asleep);
  const uint64_t sent = 0x1234567890abcdefull;
  const auto start = Clock::now();
  p.a->isend(&sent, sizeof(sent), 1);
  while (p.a->busy()) p.a->progress();
  ASSERT_EQ(receiver.wait_for(10s), std::future_status::ready) << "the doorbell did not wake the receiver";
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 5.0);
  EXPECT_GE(receiver.get(), 1);
  EXPECT_EQ(value, sent);
}

// The same for a sender asleep on a full ring: the receiver's freeing of space rings its doorbell.
TEST(ShmConnectionTest, SleepingSenderIsWokenWhenTheRingDrains) {
  Pair p = makePair(64 << 10);
  std::vector<char> out = pattern(300000, 9), in(300000, 0);
  p.a->isend(out.data(), out.size(), 1);
  std::atomic<bool> asleep{false};
  auto sender = std::async(std::launch::async, [&] {
    while (p.a->sendsDone() == 0) {
      if (p.a->progress()) continue;
      std::vector<pollfd> fds;
      p.a->addPollFds(fds);
      asleep = true;
      ::poll(fds.data(), fds.size(), 30000);
    }
  });
  const auto armedBy = Clock::now() + 10s;
  while (!asleep && Clock::now() < armedBy) std::this_thread::yield();
  ASSERT_TRUE(asleep);
  p.b->irecv(in.data(), in.size(), 1);
  const auto until = Clock::now() + 10s;
  while (p.b->recvsDone() == 0 && Clock::now() < until) p.b->progress();
  ASSERT_EQ(sender.wait_for(10s), std::future_status::ready) << "the doorbell did not wake the sender";
  EXPECT_EQ(in, out);
}

// Blocked ends with a quiet peer sleep: their poll times out instead of returning at once (no spinning).
TEST(ShmConnectionTest, BlockedEndsSleepUntilThePeerMoves) {
  Pair p = makePair(64 << 10);
  std::vector<char> out = pattern(300000, 4), in(300000, 0);
  std::vector<char> small(1000, 1);
  // Rank 0 sends many small messages first (so that its copy of the record counter goes stale), then one that
  // fills the ring, and waits for a message rank 1 never sends; rank 1 takes the small ones only.
  for (int i = 0; i < 20; ++i) p.a->isend(small.data(), small.size(), 1);
  p.a->isend(out.data(), out.size(), 1);
  uint64_t nothing;
  p.a->irecv(&nothing, sizeof(nothing), 9);
  std::vector<std::vector<char>> got(20, std::vector<char>(small.size()));
  for (auto& g : got) p.b->irecv(g.data(), g.size(), 1);
  ASSERT_TRUE(drive(*p.a, *p.b, [&] { return p.b->recvsDone() == 20 && p.a->sendsDone() == 20; }));
  for (int i = 0; i < 20; ++i) p.a->progress();
  ASSERT_TRUE(p.a->busy());
  for (int round = 0; round < 3; ++round) {
    EXPECT_FALSE(p.a->progress());
    std::vector<pollfd> fds;
    p.a->addPollFds(fds);
    EXPECT_EQ(::poll(fds.data(), fds.size(), 20), 0) << "woke with nothing to do";
  }
}

}  // namespace
}  // namespace chorus
