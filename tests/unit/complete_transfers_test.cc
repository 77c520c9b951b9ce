// completeTransfers, the loop that drives a send and a receive on every connection of a setup step: it returns
// once all completed, names only the ranks still waited on at the deadline, and gives a failure the step's context.
#include "transports/complete_transfers.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace chorus {
namespace {

// A connection whose one send and one receive complete after `roundsToGo` calls of progress() (never when < 0).
class FakeConnection : public Connection {
 public:
  FakeConnection(int peer, int roundsToGo) : peer_(peer), roundsToGo_(roundsToGo) {}
  uint64_t isend(const void*, size_t, uint32_t) override { return 0; }
  uint64_t irecv(void*, size_t, uint32_t) override { return 0; }
  bool progress() override {
    if (failure) throw Error(chorusRemoteError, "the peer hung up");
    ++calls;
    if (roundsToGo_ > 0 && --roundsToGo_ == 0) done_ = 1;
    return false;
  }
  uint64_t sendsDone() const override { return done_; }
  uint64_t recvsDone() const override { return done_; }
  bool busy() const override { return done_ == 0; }
  size_t pendingReceiveBytes() const override { return 0; }
  void addPollFds(std::vector<pollfd>&) const override {}
  void closeGracefully() override {}
  void abandon(int) override {}
  void addHangupFds(std::vector<pollfd>&) const override {}
  void checkAlive() override {}
  int peer() const override { return peer_; }
  const char* describe() const override { return "fake"; }

  bool failure = false;
  int calls = 0;

 private:
  int peer_;
  int roundsToGo_;
  uint64_t done_ = 0;
};

TransferMessages messages() {
  return {"rank 0, test setup",
          [](const std::string& waiting) { return "rank 0, test setup: timed out waiting for ranks " + waiting; },
          [](const Error& e, int peer) {
            return e.withMessage("rank 0, peer " + std::to_string(peer) + ", test setup failed: " + e.what());
          }};
}

TEST(CompleteTransfersTest, ReturnsOnceEveryConnectionIsDone) {
  FakeConnection a(1, 1), b(2, 3);
  completeTransfers({{&a, 0, 0}, {&b, 0, 0}}, Deadline::after(30), messages());
  EXPECT_EQ(a.calls, 1);  // a done connection is left alone
  EXPECT_EQ(b.calls, 3);
}

TEST(CompleteTransfersTest, TimesOutNamingOnlyTheRanksStillWaitedOn) {
  FakeConnection done(1, 1), silent3(3, -1), silent5(5, -1);
  try {
    completeTransfers({{&silent3, 0, 0}, {&done, 0, 0}, {&silent5, 0, 0}}, Deadline::after(0.1), messages());
    FAIL() << "completeTransfers returned";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), chorusTimeout);
    EXPECT_STREQ(e.what(), "rank 0, test setup: timed out waiting for ranks 3, 5");
  }
}

TEST(CompleteTransfersTest, GivesAFailureTheStepsContextOrPassesItOn) {
  FakeConnection broken(4, -1);
  broken.failure = true;
  try {
    completeTransfers({{&broken, 0, 0}}, Deadline::after(30), messages());
    FAIL() << "completeTransfers returned";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), chorusRemoteError);
    EXPECT_STREQ(e.what(), "rank 0, peer 4, test setup failed: the peer hung up");
  }
  TransferMessages plain = messages();
  plain.failed = nullptr;
  try {
    completeTransfers({{&broken, 0, 0}}, Deadline::after(30), plain);
    FAIL() << "completeTransfers returned";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "the peer hung up");
  }
}

}  // namespace
}  // namespace chorus
