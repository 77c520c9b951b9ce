// The staged device connection on its own, over emulated device memory: two ends in this process, each with its
// own emulated device, layered over a TCP pair (a socketpair) or a shared-memory pair, driven by hand. Ordering of
// many queued messages, sizes around the chunk, host pointers passing through unstaged, pinned slots allocated
// once, back-pressure from a late receiver, a host connection left quiet, mismatches, a peer that abandons or
// vanishes mid-transfer, and device copies in flight never hidden from a caller sleeping in poll.
#include "transports/device/staged_connection.h"

#include <gtest/gtest.h>
#include <poll.h>

#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "tests/unit/device_test_support.h"

namespace chorus::test {
namespace {

constexpr size_t kChunk = kStagedChunkBytes;

// Two ranks in this process and the staged ends over their host connections.
struct StagedEnds : HostEnds {
  explicit StagedEnds(HostKind kind) : HostEnds(kind, "staged-connection-test-") {
    a = std::make_unique<StagedConnection>(0, *hostA, apiA);
    b = std::make_unique<StagedConnection>(1, *hostB, apiB);
  }
  std::unique_ptr<StagedConnection> a, b;  // members of the derived struct: destroyed before the hosts and devices
};

class StagedConnectionTest : public DeviceEndsTest<StagedEnds> {
 protected:
  void SetUp() override {
    DeviceEndsTest::SetUp();
    ASSERT_TRUE(e_->a && e_->b);
  }
};

TEST_P(StagedConnectionTest, DescribesItselfOverItsHostAndNamesThePeer) {
  expectDescribedOverTheHost("staged 4 x 1024 KiB pinned over ");
  EXPECT_EQ(e_->apiA.pinnedAllocs, 0) << "nothing pinned before the first device chunk";
}

// Sizes around the chunk, both directions at once, device to device.
TEST_P(StagedConnectionTest, SizesAroundTheChunkArriveIntactBothWays) {
  ASSERT_NO_FATAL_FAILURE(
      exchangeEachSizeBothWays({0, 1, kChunk - 1, kChunk, kChunk + 1, 5 * kChunk + 12345},
                               [&](const ExchangeIds& ids) { EXPECT_EQ(e_->a->recvsDone(), ids.recvA + 1); }));
  // Pinned slots are made once per direction and reused by every later chunk.
  EXPECT_EQ(e_->apiA.pinnedAllocs, 2);
  EXPECT_EQ(e_->apiB.pinnedAllocs, 2);
}

// Many messages of every size class queued at once on both sides complete in posting order with their own bytes.
TEST_P(StagedConnectionTest, ManyQueuedMessagesCompleteInPostingOrder) {
  std::vector<size_t> sizes;
  for (int i = 0; i < 120; ++i) {
    size_t size = (i % 9 == 0) ? 0 : (i % 10 == 1) ? kChunk + static_cast<size_t>(i) : static_cast<size_t>(i * 997);
    if (i == 50) size = 3 * kChunk - 1;
    sizes.push_back(size);
  }
  // Completion counts only ever step forward.
  uint64_t lastDone = 0;
  ASSERT_NO_FATAL_FAILURE(sendQueuedMessagesInOrder(sizes, [&] {
    EXPECT_GE(e_->b->recvsDone(), lastDone);
    lastDone = e_->b->recvsDone();
  }));
  expectHostsQuiet();
}

// Host memory on either side (or both) goes through the host connection unstaged: no pinned slots, no copies.
TEST_P(StagedConnectionTest, HostPointersPassStraightThrough) {
  const size_t n = 2 * kChunk + 7;
  const auto data = pattern(n, 4);
  std::vector<char> hostIn(n, 0);
  e_->a->isend(data.data(), n, 1);
  e_->b->irecv(hostIn.data(), n, 1);
  ASSERT_TRUE(driveUntilIdle());
  EXPECT_TRUE(hostIn == data);
  EXPECT_EQ(e_->apiA.pinnedAllocs + e_->apiB.pinnedAllocs, 0);
  EXPECT_EQ(e_->apiA.copies + e_->apiB.copies, 0);

  // Host to device and device to host: only the device side stages.
  DeviceBuffer devIn(e_->apiB, n), devOut(e_->apiB, n);
  devOut.write(data);
  std::vector<char> back(n, 0);
  const int copiesBefore = e_->apiB.copies;
  e_->a->isend(data.data(), n, 2);
  e_->b->irecv(devIn.get(), n, 2);
  e_->b->isend(devOut.get(), n, 2);
  e_->a->irecv(back.data(), n, 2);
  ASSERT_TRUE(driveUntilIdle());
  EXPECT_EQ(e_->apiB.copies - copiesBefore, 6) << "three chunks each way";
  EXPECT_EQ(e_->apiA.copies, 0);
  EXPECT_EQ(e_->apiA.pinnedAllocs, 0);
  EXPECT_EQ(e_->apiB.pinnedAllocs, 2);
  EXPECT_TRUE(devIn.read() == data);
  EXPECT_TRUE(back == data);
  expectHostsQuiet();
}

// A sender far ahead of its receiver stops when its slots and the host connection are full; nothing is lost, and
// no slot is allocated per message.
TEST_P(StagedConnectionTest, LateReceiverHoldsTheSenderBack) {
  ASSERT_NO_FATAL_FAILURE(sendToALateReceiver(6, 3 * kChunk + 1000, [&](int /*copies*/) {
    // The host connection buffers at most a few hundred KiB (socket or ring), the slots 4 MiB: far from 19 MiB.
    EXPECT_LE(e_->a->sendsDone(), 2u);
    EXPECT_TRUE(e_->a->busy());
  }));
  EXPECT_EQ(e_->apiA.pinnedAllocs, 1);
  EXPECT_EQ(e_->apiB.pinnedAllocs, 1);
  expectHostsQuiet();
}

// Sizes are cut into chunks the same way on both sides, so a size mismatch surfaces as the host connection's.
TEST_P(StagedConnectionTest, SizeMismatchFailsNamingBothSizes) {
  failMismatched(5000, 4000, 3, 3, [](const Error& err) {
    EXPECT_EQ(err.code(), chorusInvalidUsage) << err.what();
    EXPECT_NE(std::string(err.what()).find("sent 5000 bytes"), std::string::npos) << err.what();
    EXPECT_NE(std::string(err.what()).find("expects 4000 bytes"), std::string::npos) << err.what();
  });
}

TEST_P(StagedConnectionTest, PeerThatAbandonsMidTransferFailsTheReceiverAtOnce) {
  abandonMidTransfer(8 * kChunk, [](const Error& err) {
    EXPECT_EQ(err.code(), chorusRemoteError) << err.what();
    // Over TCP a sender caught inside a frame cannot append its abandon note: then the hang-up says it.
    const std::string what = err.what();
    EXPECT_TRUE(what.find("rank 1, peer 0: the peer gave up") != std::string::npos ||
                what.find("rank 1, peer 0: lost connection") != std::string::npos)
        << what;
  });
}

TEST_P(StagedConnectionTest, PeerThatVanishesIsReportedLost) {
  DeviceBuffer in(e_->apiB, 100);
  e_->b->irecv(in.get(), 100, 1);
  e_->b->progress();
  e_->a.reset();
  e_->hostA.reset();  // no goodbye: as if its process had died
  std::vector<pollfd> fds;
  e_->b->addHangupFds(fds);
  ASSERT_FALSE(fds.empty());
  ASSERT_EQ(::poll(fds.data(), fds.size(), 5000), 1);
  Error err = errorFrom([&] {
    e_->b->checkAlive();
    e_->b->progress();
  });
  EXPECT_EQ(err.code(), chorusRemoteError) << err.what();
  EXPECT_NE(std::string(err.what()).find("rank 1, peer 0: lost connection"), std::string::npos) << err.what();
}

// While a device copy is in flight the end says so; once idle, a sleeper sleeps.
TEST_P(StagedConnectionTest, CopyInFlightIsNeverHiddenFromAPollSleeper) {
  ASSERT_NO_FATAL_FAILURE(holdACopyInFlight(kChunk, [&] { EXPECT_EQ(e_->a->sendsDone(), 0u); }));
  // Idle with a receive nobody answers: the descriptors do not wake a sleeper.
  uint64_t nothing = 0;
  e_->b->irecv(&nothing, sizeof(nothing), 9);
  e_->b->progress();
  std::vector<pollfd> fds;
  e_->b->addPollFds(fds);
  EXPECT_EQ(::poll(fds.data(), fds.size(), 20), 0) << "woke with nothing to do";
}

// The host connection is the device connection's only while it is busy: host messages flow on it after.
TEST_P(StagedConnectionTest, HostConnectionCarriesHostMessagesAfterward) {
  const size_t n = 2 * kChunk + 3;
  DeviceBuffer out(e_->apiA, n), in(e_->apiB, n);
  out.write(pattern(n, 9));
  e_->a->isend(out.get(), n, 1);
  e_->b->irecv(in.get(), n, 1);
  ASSERT_TRUE(driveUntilIdle());
  expectHostsCarryAMessage();
}

INSTANTIATE_TEST_SUITE_P(Hosts, StagedConnectionTest, ::testing::Values(HostKind::kTcp, HostKind::kShm), hostKindName);

}  // namespace
}  // namespace chorus::test
