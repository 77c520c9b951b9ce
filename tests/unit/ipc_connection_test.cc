// The CUDA IPC connection over emulated device memory, in this process: two ends, each with its own emulated
// device, the sender writing into the receiver's ring directly (CUDA IPC opens nothing in the exporting process),
// over a TCP pair (a socketpair) or a shared-memory pair. Sizes around the slot, ordering, empty messages beyond
// the control window, credits bounding a sender whose receiver is late, announcements that arrive before their
// receive, host pointers, mismatches, a peer that abandons mid-transfer, copies in flight never hidden from a poll
// sleeper, and a host connection left quiet. (Across a fork, through makeDeviceConnections: device_connections_test.)
#include "transports/cuda_ipc/ipc_connection.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "tests/unit/device_test_support.h"
#include "tests/unit/ipc_test_ends.h"

namespace chorus::test {
namespace {

constexpr size_t kRingSlot = kIpcSlotBytes;

using IpcConnectionTest = DeviceEndsTest<IpcEnds>;

TEST_P(IpcConnectionTest, DescribesItselfOverItsHostAndNamesThePeer) {
  expectDescribedOverTheHost("cuda ipc 4 x 1024 KiB ring (gated emulated) over ");
}

TEST_P(IpcConnectionTest, SizesAroundTheSlotArriveIntactBothWays) {
  const int allocsBefore = e_->apiA.deviceAllocs + e_->apiB.deviceAllocs;
  ASSERT_NO_FATAL_FAILURE(
      exchangeEachSizeBothWays({0, 1, kRingSlot - 1, kRingSlot, kRingSlot + 1, 9 * kRingSlot + 12345},
                               [&](const ExchangeIds& ids) { EXPECT_EQ(e_->b->recvsDone(), ids.recvB + 1); }));
  // Only the test's own buffers were allocated (four a size, none for n = 0): the rings are reused.
  EXPECT_EQ(e_->apiA.deviceAllocs + e_->apiB.deviceAllocs - allocsBefore, 4 * 5);
  EXPECT_EQ(e_->apiA.pinnedAllocs + e_->apiB.pinnedAllocs, 0) << "CUDA IPC needs no pinned memory";
}

// Runs of empty messages longer than the control window, between messages of every size, all queued at once.
TEST_P(IpcConnectionTest, ManyQueuedMessagesCompleteInPostingOrder) {
  std::vector<size_t> sizes;
  for (int i = 0; i < 200; ++i) {
    sizes.push_back((i >= 20 && i < 100) ? 0
                    : (i % 10 == 1)      ? 2 * kRingSlot + static_cast<size_t>(i)
                                         : size_t(i) * 997);
  }
  ASSERT_NO_FATAL_FAILURE(sendQueuedMessagesInOrder(sizes, [] {}));
  ASSERT_TRUE(driveUntilIdle());
  expectHostsQuiet();
}

// With its receiver absent, the sender fills the peer's ring and stops: exactly one copy per slot, then waits for
// credits.
TEST_P(IpcConnectionTest, CreditsHoldALateReceiversSenderToItsRing) {
  // Three messages of four pieces each.
  ASSERT_NO_FATAL_FAILURE(sendToALateReceiver(3, 3 * kRingSlot + 1000, [&](int copies) {
    EXPECT_EQ(copies, static_cast<int>(kIpcSlots));
    EXPECT_EQ(e_->a->sendsDone(), 1u) << "the first message fits the ring; the second needs credits";
  }));
  ASSERT_TRUE(driveUntilIdle());
  expectHostsQuiet();
}

// Rank 1 waits for credits of its own sends while rank 0's announcements arrive for receives rank 1 has not posted:
// they are kept until it does.
TEST_P(IpcConnectionTest, AnnouncementsBeforeTheirReceiveAreKept) {
  const size_t big = 3 * kRingSlot;
  DeviceBuffer bOut(e_->apiB, big), aIn(e_->apiA, big);
  const auto fromB = pattern(big, 20);
  bOut.write(fromB);
  e_->b->isend(bOut.get(), big, 1);
  e_->a->irecv(aIn.get(), big, 1);
  const auto first = pattern(kRingSlot / 2, 21);
  DeviceBuffer aOut1(e_->apiA, first.size()), bIn1(e_->apiB, first.size());
  aOut1.write(first);
  e_->a->isend(aOut1.get(), first.size(), 2);
  e_->a->isend(nullptr, 0, 2);
  ASSERT_TRUE(drive(*e_->a, *e_->b, [&] { return e_->a->recvsDone() == 1 && e_->a->sendsDone() == 2; }));
  EXPECT_TRUE(aIn.read() == fromB);
  // Now rank 1 posts its receives, late.
  e_->b->irecv(bIn1.get(), first.size(), 2);
  e_->b->irecv(nullptr, 0, 2);
  ASSERT_TRUE(drive(*e_->a, *e_->b, [&] { return e_->b->recvsDone() == 2; }));
  EXPECT_TRUE(bIn1.read() == first);
  ASSERT_TRUE(driveUntilIdle());
  expectHostsQuiet();
}

// Host memory goes through the rings too (the copy engine reads and writes host memory).
TEST_P(IpcConnectionTest, HostPointersOnEitherSideWork) {
  const size_t n = 2 * kRingSlot + 7;
  const auto data = pattern(n, 4);
  std::vector<char> hostIn(n, 0), back(n, 0);
  DeviceBuffer devIn(e_->apiB, n), devOut(e_->apiB, n);
  devOut.write(data);
  e_->a->isend(data.data(), n, 1);  // host to host
  e_->b->irecv(hostIn.data(), n, 1);
  e_->a->isend(data.data(), n, 2);  // host to device
  e_->b->irecv(devIn.get(), n, 2);
  e_->b->isend(devOut.get(), n, 3);  // device to host
  e_->a->irecv(back.data(), n, 3);
  ASSERT_TRUE(driveUntilIdle());
  EXPECT_TRUE(hostIn == data);
  EXPECT_TRUE(devIn.read() == data);
  EXPECT_TRUE(back == data);
  expectHostsQuiet();
}

TEST_P(IpcConnectionTest, SizeMismatchFailsNamingBothSizesInTheCallersTerms) {
  failMismatched(3 * kRingSlot, 2 * kRingSlot, 3, 3, [](const Error& err) {
    EXPECT_EQ(err.code(), chorusInvalidUsage) << err.what();
    EXPECT_NE(std::string(err.what())
                  .find("rank 1, peer 0: the peer sent 3145728 bytes for call tag 3 where this rank expects "
                        "2097152 bytes for tag 3"),
              std::string::npos)
        << err.what();
  });
}

TEST_P(IpcConnectionTest, TagMismatchFailsNamingBothTags) {
  failMismatched(100, 100, 7, 8, [](const Error& err) {
    EXPECT_EQ(err.code(), chorusInvalidUsage) << err.what();
    EXPECT_NE(std::string(err.what()).find("sent 100 bytes for call tag 7 where this rank expects 100 bytes for tag 8"),
              std::string::npos)
        << err.what();
  });
}

TEST_P(IpcConnectionTest, PeerThatAbandonsMidTransferFailsTheReceiverAtOnce) {
  abandonMidTransfer(8 * kRingSlot, [](const Error& err) {
    EXPECT_EQ(err.code(), chorusRemoteError) << err.what();
    EXPECT_NE(std::string(err.what()).find("rank 1, peer 0: the peer gave up"), std::string::npos) << err.what();
  });
}

// While a device copy is in flight the end says so, and a caller that sleeps briefly still sees it finish.
TEST_P(IpcConnectionTest, CopyInFlightIsNeverHiddenFromAPollSleeper) {
  holdACopyInFlight(kRingSlot, [] {});
}

TEST_P(IpcConnectionTest, HostConnectionCarriesHostMessagesAfterward) {
  const size_t n = 2 * kRingSlot + 3;
  DeviceBuffer out(e_->apiA, n), in(e_->apiB, n), back(e_->apiA, n);
  out.write(pattern(n, 9));
  e_->a->isend(out.get(), n, 1);
  e_->b->irecv(in.get(), n, 1);
  e_->a->irecv(back.get(), n, 2);
  ASSERT_TRUE(drive(*e_->a, *e_->b, [&] { return e_->b->recvsDone() == 1; }));
  e_->b->isend(in.get(), n, 2);  // back again, once it has arrived
  ASSERT_TRUE(driveUntilIdle());
  EXPECT_TRUE(back.read() == pattern(n, 9));
  expectHostsCarryAMessage();
}

INSTANTIATE_TEST_SUITE_P(Hosts, IpcConnectionTest, ::testing::Values(HostKind::kTcp, HostKind::kShm), hostKindName);

}  // namespace
}  // namespace chorus::test
