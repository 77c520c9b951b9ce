// The CUDA IPC connection's byte ring, over emulated device memory in this process (as in ipc_connection_test.cc):
// many small messages in flight at once, posted both ways before any receive; sizes around the ring's, whose
// pieces cross its end; a message several rings long streaming through; a late receiver's sender holding exactly
// the ring's bytes; control messages whose positions are wrong refused.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "tests/unit/device_test_support.h"
#include "tests/unit/ipc_test_ends.h"
#include "transports/cuda_ipc/ipc_connection.h"

namespace chorus::test {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr size_t kPiece = kIpcSlotBytes;
constexpr size_t kRing = kIpcSlots * kIpcSlotBytes;

// The IPC ends on a shared-memory host pair of their own.
struct ByteRingEnds : IpcEnds {
  explicit ByteRingEnds(HostKind kind) : IpcEnds(kind, "ipc-byte-ring-test-") {}
};

using IpcByteRingTest = DeviceEndsTest<ByteRingEnds>;

// Messages of the given sizes from one end to the other, packed back to back in one device buffer on each side
// (message i carries tag 100 + i).
class MessageRun {
 public:
  MessageRun(DeviceApi& from, DeviceApi& to, std::vector<size_t> sizes, int seed)
      : sizes_(std::move(sizes)),
        total_(sum(sizes_)),
        sent_(pattern(total_, seed)),
        out_(from, total_),
        in_(to, total_) {
    out_.write(sent_);
  }
  size_t count() const { return sizes_.size(); }
  void postSends(Connection& c) {
    size_t at = 0;
    for (size_t i = 0; i < sizes_.size(); at += sizes_[i], ++i) c.isend(at_(out_, at), sizes_[i], tag(i));
  }
  void postRecvs(Connection& c) {
    size_t at = 0;
    for (size_t i = 0; i < sizes_.size(); at += sizes_[i], ++i) c.irecv(at_(in_, at), sizes_[i], tag(i));
  }
  // True when every message arrived intact.
  bool arrived() const { return in_.read() == sent_; }

 private:
  static size_t sum(const std::vector<size_t>& v) {
    size_t s = 0;
    for (size_t x : v) s += x;
    return s;
  }
  static char* at_(const DeviceBuffer& b, size_t offset) {
    return b.get() == nullptr ? nullptr : static_cast<char*>(b.get()) + offset;
  }
  static uint32_t tag(size_t i) { return static_cast<uint32_t>(100 + i); }

  std::vector<size_t> sizes_;
  size_t total_;
  std::vector<char> sent_;
  DeviceBuffer out_, in_;
};

// The device copies one side makes for messages of these sizes packed into the ring from position 0: one per
// non-empty piece, two for a piece that crosses the ring's end.
size_t ringCopies(const std::vector<size_t>& sizes) {
  size_t copies = 0, position = 0;
  for (size_t n : sizes) {
    for (size_t begin = 0; begin < n; begin += kPiece) {
      const size_t len = std::min(kPiece, n - begin);
      copies += (position % kRing) + len > kRing ? 2 : 1;
      position += len;
    }
  }
  return copies;
}

// Progresses both ends for a while (the emulated copies run on threads of their own): long enough for anything
// that could still move to move.
void spin(Connection& a, Connection& b) {
  const auto until = Clock::now() + 200ms;
  while (Clock::now() < until) {
    a.progress();
    b.progress();
    std::this_thread::yield();
  }
}

// 100 x 4 KiB then 1000 x 8 B each way, all sent before any receive is posted: they fit the ring's bytes, so every
// send completes on its own, one copy each (shared memory and TCP absorb such runs too; collectives rely on it).
TEST_P(IpcByteRingTest, ManySmallMessagesBothWaysCompleteBeforeAnyReceive) {
  std::vector<size_t> sizes(100, 4096);
  sizes.insert(sizes.end(), 1000, 8);
  MessageRun ab(e_->apiA, e_->apiB, sizes, 1), ba(e_->apiB, e_->apiA, sizes, 2);
  const int copiesA = e_->apiA.copies, copiesB = e_->apiB.copies;
  ab.postSends(*e_->a);
  ba.postSends(*e_->b);
  const uint64_t n = sizes.size();
  ASSERT_TRUE(drive(*e_->a, *e_->b, [&] { return e_->a->sendsDone() == n && e_->b->sendsDone() == n; }))
      << "sends done: " << e_->a->sendsDone() << " and " << e_->b->sendsDone() << " of " << n;
  EXPECT_EQ(e_->a->recvsDone(), 0u);
  EXPECT_EQ(e_->apiA.copies - copiesA, static_cast<int>(n)) << "one copy into the ring per message";
  EXPECT_EQ(e_->apiB.copies - copiesB, static_cast<int>(n));
  ab.postRecvs(*e_->b);
  ba.postRecvs(*e_->a);
  ASSERT_TRUE(driveUntilIdle());
  EXPECT_EQ(e_->a->recvsDone(), n);
  EXPECT_EQ(e_->b->recvsDone(), n);
  EXPECT_TRUE(ab.arrived());
  EXPECT_TRUE(ba.arrived());
  expectHostsQuiet();
}

// A late receiver's sender packs exactly the ring's bytes (64 x 64 KiB) and waits for credits for the rest.
TEST_P(IpcByteRingTest, LateReceiversSenderFillsExactlyTheRingsBytes) {
  const size_t size = 64 << 10, fit = kRing / size;
  MessageRun ab(e_->apiA, e_->apiB, std::vector<size_t>(fit + 6, size), 3);
  const int copiesBefore = e_->apiA.copies;
  ab.postSends(*e_->a);
  ASSERT_TRUE(drive(*e_->a, *e_->b, [&] { return e_->a->sendsDone() == fit; }));
  spin(*e_->a, *e_->b);
  EXPECT_EQ(e_->a->sendsDone(), fit) << "more than the ring's bytes went in";
  EXPECT_EQ(e_->apiA.copies - copiesBefore, static_cast<int>(fit));
  ab.postRecvs(*e_->b);
  ASSERT_TRUE(driveUntilIdle());
  EXPECT_EQ(e_->b->recvsDone(), ab.count());
  EXPECT_TRUE(ab.arrived());
  expectHostsQuiet();
}

// Sizes around the ring's and the piece's, both ways at once, all sent before any receive: pieces land at odd
// positions and some cross the ring's end, copied in two parts on each side; everything arrives in order.
TEST_P(IpcByteRingTest, MixedSizesAroundTheRingSizeCrossItsEndIntact) {
  const std::vector<size_t> sizes = {
      kRing - 1,     1,     0,           kRing, kRing + 1, kPiece - 1, kPiece + 1, 7, kRing / 2 + 3, 0, 3 * kRing / 4,
      2 * kRing + 5, 12345, kRing - 4096};
  ASSERT_GT(ringCopies(sizes), 30u) << "the sizes must make pieces cross the ring's end";
  MessageRun ab(e_->apiA, e_->apiB, sizes, 4), ba(e_->apiB, e_->apiA, sizes, 5);
  const int copiesA = e_->apiA.copies, copiesB = e_->apiB.copies;
  ab.postSends(*e_->a);
  ba.postSends(*e_->b);
  spin(*e_->a, *e_->b);
  ab.postRecvs(*e_->b);
  ba.postRecvs(*e_->a);
  ASSERT_TRUE(driveUntilIdle());
  // Each side copied every piece into the peer's ring and out of its own, two parts where a piece wraps.
  EXPECT_EQ(e_->apiA.copies - copiesA, static_cast<int>(2 * ringCopies(sizes)));
  EXPECT_EQ(e_->apiB.copies - copiesB, static_cast<int>(2 * ringCopies(sizes)));
  EXPECT_TRUE(ab.arrived());
  EXPECT_TRUE(ba.arrived());
  expectHostsQuiet();
}

// A piece that starts 100 bytes before the ring's end is copied in two parts on each side; the next starts
// where it ended, in one.
TEST_P(IpcByteRingTest, PieceAcrossTheRingsEndIsCopiedInTwoParts) {
  MessageRun first(e_->apiA, e_->apiB, {kRing - 100}, 6);
  first.postSends(*e_->a);
  first.postRecvs(*e_->b);
  ASSERT_TRUE(driveUntilIdle());
  ASSERT_TRUE(first.arrived());
  MessageRun across(e_->apiA, e_->apiB, {1000}, 7), after(e_->apiA, e_->apiB, {100}, 8);
  int copiesA = e_->apiA.copies, copiesB = e_->apiB.copies;
  across.postSends(*e_->a);
  across.postRecvs(*e_->b);
  ASSERT_TRUE(driveUntilIdle());
  EXPECT_TRUE(across.arrived());
  EXPECT_EQ(e_->apiA.copies - copiesA, 2);
  EXPECT_EQ(e_->apiB.copies - copiesB, 2 + 1) << "two parts out of the ring, and the test's read";
  copiesA = e_->apiA.copies;
  copiesB = e_->apiB.copies;
  after.postSends(*e_->a);
  after.postRecvs(*e_->b);
  ASSERT_TRUE(driveUntilIdle());
  EXPECT_TRUE(after.arrived());
  EXPECT_EQ(e_->apiA.copies - copiesA, 1);
  EXPECT_EQ(e_->apiB.copies - copiesB, 1 + 1);
  expectHostsQuiet();
}

// A message of 3.5 rings each way: with no receive posted each sender fills the ring (four pieces) and waits;
// once posted, the rest streams through in pieces.
TEST_P(IpcByteRingTest, MessageOfThreeAndAHalfRingsStreamsThroughInPieces) {
  const size_t n = 7 * kRing / 2;
  MessageRun ab(e_->apiA, e_->apiB, {n}, 9), ba(e_->apiB, e_->apiA, {n}, 10);
  const int copiesA = e_->apiA.copies, copiesB = e_->apiB.copies;
  ab.postSends(*e_->a);
  ba.postSends(*e_->b);
  ASSERT_TRUE(drive(*e_->a, *e_->b, [&] {
    return e_->apiA.copies - copiesA == static_cast<int>(kIpcSlots) &&
           e_->apiB.copies - copiesB == static_cast<int>(kIpcSlots);
  }));
  spin(*e_->a, *e_->b);
  EXPECT_EQ(e_->apiA.copies - copiesA, static_cast<int>(kIpcSlots)) << "only a ring's worth goes in unreceived";
  EXPECT_EQ(e_->apiB.copies - copiesB, static_cast<int>(kIpcSlots));
  EXPECT_EQ(e_->a->sendsDone(), 0u);
  ab.postRecvs(*e_->b);
  ba.postRecvs(*e_->a);
  ASSERT_TRUE(driveUntilIdle());
  const int pieces = static_cast<int>(IpcConnection::pieceCount(n, kPiece));
  EXPECT_EQ(pieces, 14);
  EXPECT_EQ(e_->apiA.copies - copiesA, 2 * pieces) << "pieces in and out, none wrapping";
  EXPECT_TRUE(ab.arrived());
  EXPECT_TRUE(ba.arrived());
  expectHostsQuiet();
}

// Rank 1 hands back bytes at a position rank 0 never wrote there: rank 0 refuses it as corrupt.
TEST_P(IpcByteRingTest, CreditAtTheWrongPositionIsRefused) {
  MessageRun ab(e_->apiA, e_->apiB, {100}, 11);
  ab.postSends(*e_->a);
  ASSERT_TRUE(drive(*e_->a, *e_->hostB, [&] { return e_->a->sendsDone() == 1; }));
  const IpcControl bogus{kIpcControlMagic, kIpcCredit, 0, 100, 5, 0};
  e_->hostB->isend(&bogus, sizeof(bogus), kIpcControlTag);
  Error err = errorFrom([&] { drive(*e_->a, *e_->hostB, [] { return false; }); });
  EXPECT_EQ(err.code(), chorusRemoteError) << err.what();
  EXPECT_NE(std::string(err.what()).find("rank 0, peer 1, cuda ipc control message"), std::string::npos) << err.what();
  EXPECT_NE(std::string(err.what()).find("): corrupt: expected the credit at position 0"), std::string::npos)
      << err.what();
  abandonBoth();
}

// Rank 0 announces five pieces of a quarter ring each at once, ignoring credits: rank 1 takes all five in one step,
// before any copy out could have handed bytes back, and refuses the fifth as more than the ring holds.
TEST_P(IpcByteRingTest, AnnouncementBeyondTheRingsFreeBytesIsRefused) {
  DeviceBuffer in(e_->apiB, 5 * kPiece);
  for (size_t i = 0; i < 5; ++i) e_->b->irecv(static_cast<char*>(in.get()) + i * kPiece, kPiece, 1);
  std::vector<IpcControl> readies;
  for (uint64_t i = 0; i < 5; ++i) {
    readies.push_back(IpcControl{kIpcControlMagic, kIpcReady, 1, static_cast<uint32_t>(kPiece), i * kPiece, kPiece});
  }
  for (const IpcControl& m : readies) e_->hostA->isend(&m, sizeof(m), kIpcControlTag);
  // All five wait in rank 1's host connection before rank 1 posts its control receives.
  ASSERT_TRUE(drive(*e_->hostA, *e_->hostA, [&] { return !e_->hostA->busy(); }));
  Error err = errorFrom([&] { drive(*e_->b, *e_->hostA, [] { return false; }); });
  EXPECT_EQ(err.code(), chorusRemoteError) << err.what();
  EXPECT_NE(std::string(err.what()).find("): corrupt: the ring holds 4194304 bytes, of which 4194304 were not handed"),
            std::string::npos)
      << err.what();
  abandonBoth();
}

INSTANTIATE_TEST_SUITE_P(Hosts, IpcByteRingTest, ::testing::Values(HostKind::kTcp, HostKind::kShm), hostKindName);

}  // namespace
}  // namespace chorus::test
