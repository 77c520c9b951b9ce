// The failures every connection reports: each carries its code and kind, and names this rank and the peer.
#include "transports/connection_errors.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "core/error.h"

namespace chorus {
namespace {

Error caught(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no chorus::Error thrown";
  return Error(chorusSuccess, "");
}

TEST(ConnectionErrorsTest, EachFailureHasItsCodeKindAndNames) {
  struct Case {
    std::function<void()> raise;
    chorusResult_t code;
    Failure failure;
    const char* says;
    int lostPeer;
  };
  const Case cases[] = {
      {[] { connection_errors::peerLost(3, 5, "shm ring", "it vanished"); }, chorusRemoteError, Failure::kPeerLost,
       "rank 3, peer 5: lost connection (shm ring): it vanished", 5},
      {[] { connection_errors::peerGaveUp(3, 5, kNoRank); }, chorusRemoteError, Failure::kRemoteError,
       "rank 3, peer 5: the peer gave up on the communicator", kNoRank},
      // A peer that gave up because a third rank vanished passes that on: the error is that loss.
      {[] { connection_errors::peerGaveUp(3, 5, 7); }, chorusRemoteError, Failure::kPeerLost,
       "rank 3, peer 5: the peer gave up on the communicator because rank 7 vanished without a goodbye", 7},
      {[] { connection_errors::mismatchedMessage(3, 5, 12, 7, 10, 7, ""); }, chorusInvalidUsage, Failure::kMismatch,
       "rank 3, peer 5: the peer sent 12 bytes for call tag 7 where this rank expects 10 bytes for tag 7", kNoRank},
      {[] { connection_errors::peerClosedEarly(3, 5, "still expected data from it"); }, chorusInvalidUsage,
       Failure::kMismatch,
       "rank 3, peer 5: the peer destroyed its communicator while this rank still expected data from it", kNoRank},
      {[] { connection_errors::corrupt(3, 5, "tcp", "frame: bad magic"); }, chorusRemoteError, Failure::kCorrupt,
       "rank 3, peer 5: corrupt data (tcp): frame: bad magic", kNoRank},
  };
  for (const Case& c : cases) {
    const Error e = caught(c.raise);
    EXPECT_EQ(e.code(), c.code) << e.what();
    EXPECT_EQ(e.failure(), c.failure) << e.what();
    EXPECT_EQ(e.lostPeer(), c.lostPeer) << e.what();
    EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos) << e.what();
  }
}

TEST(ConnectionErrorsTest, TimeoutsAreTimeoutsAndContextKeepsTheKind) {
  EXPECT_EQ(Error(chorusTimeout, "x").failure(), Failure::kTimeout);
  EXPECT_EQ(Error(chorusSystemError, "x").failure(), Failure::kUnspecified);
  const Error lost(chorusRemoteError, "lost", Failure::kPeerLost, 4);
  const Error wrapped = lost.withMessage("during allreduce #3: lost");
  EXPECT_EQ(wrapped.failure(), Failure::kPeerLost);
  EXPECT_EQ(wrapped.lostPeer(), 4);
  EXPECT_EQ(wrapped.code(), chorusRemoteError);
  EXPECT_STREQ(wrapped.what(), "during allreduce #3: lost");
}

}  // namespace
}  // namespace chorus
