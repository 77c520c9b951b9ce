// Sealed TCP frames (CHORUS_ENCRYPT) against a stranger on the wire: a relay between the two ends that passes the
// bytes on, flips one, or plays a recorded frame again. Every alteration fails the receive with a corruption
// error naming the peer; none delivers data. The conformance suite (connection_conformance_test.cc) runs the
// sealed ends through every ordinary case.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "tests/harness/error_capture.h"
#include "tests/unit/device_test_support.h"
#include "transports/tcp/tcp_connection.h"

namespace chorus::test {
namespace {

// Rank 0's end and rank 1's end, each on its own socketpair; the test relays bytes between the pairs' far ends.
struct RelayedPair {
  std::unique_ptr<TcpConnection> sender, receiver;
  int fromSender = -1, toReceiver = -1;  // the relay's two descriptors

  explicit RelayedPair(bool sameKeys = true) {
    int up[2], down[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, up) != 0 ||
        ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, down) != 0) {
      throw std::runtime_error("socketpair");
    }
    RecordCipher::Key k01{}, k10{};
    k01.fill(0x42);
    k10.fill(0x24);
    RecordCipher::Key receiverOpens = k01;
    if (!sameKeys) receiverOpens[7] ^= 1;
    sender = std::make_unique<TcpConnection>(0, 1, "relayed", std::vector<int>{up[0]},
                                             std::vector<TcpLinkKeys>{TcpLinkKeys{k01, k10}});
    receiver = std::make_unique<TcpConnection>(1, 0, "relayed", std::vector<int>{down[1]},
                                               std::vector<TcpLinkKeys>{TcpLinkKeys{k10, receiverOpens}});
    fromSender = up[1];
    toReceiver = down[0];
  }
  ~RelayedPair() {
    ::close(fromSender);
    ::close(toReceiver);
  }

  // Sends `bytes` from rank 0 and returns what went on the wire (header, record and tag).
  std::vector<uint8_t> sendAndCapture(const std::vector<char>& bytes, uint32_t tag) {
    const uint64_t id = sender->isend(bytes.data(), bytes.size(), tag);
    std::vector<uint8_t> wire;
    const bool sent = drive(*sender, *sender, [&] {
      uint8_t chunk[65536];
      const ssize_t n = ::recv(fromSender, chunk, sizeof(chunk), MSG_DONTWAIT);
      if (n > 0) wire.insert(wire.end(), chunk, chunk + n);
      return sender->sendsDone() > id && n <= 0;
    });
    if (!sent) throw std::runtime_error("the send did not complete");
    return wire;
  }
  // Queues bytes for the relay to pass to rank 1 (as fast as rank 1 takes them, during receive()).
  void deliver(const std::vector<uint8_t>& wire) { relayed.insert(relayed.end(), wire.begin(), wire.end()); }
  // Receives a message of `bytes` on rank 1, relaying meanwhile; true once it completed, throws what the
  // connection throws.
  bool receive(std::vector<char>& into, uint32_t tag) {
    const uint64_t id = receiver->irecv(into.data(), into.size(), tag);
    return drive(*receiver, *receiver, [&] {
      if (relayedAt < relayed.size()) {
        const ssize_t n = ::send(toReceiver, relayed.data() + relayedAt, relayed.size() - relayedAt,
                                 MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n > 0) relayedAt += static_cast<size_t>(n);
      }
      return receiver->recvsDone() > id;
    });
  }
  std::vector<uint8_t> relayed;
  size_t relayedAt = 0;
};

TEST(TcpSealedTest, RelayedUntouchedTheBytesArriveAndTheWireHoldsNoPlaintext) {
  RelayedPair p;
  const std::vector<char> message = pattern(2 * TcpConnection::kRecordBytes + 188000, 5);  // three records
  const std::vector<uint8_t> wire = p.sendAndCapture(message, 9);
  EXPECT_EQ(wire.size(), message.size() + 3 * (sizeof(FrameHeader) + RecordCipher::kTagBytes));
  // No 64-byte run of the message shows on the wire.
  const std::string onWire(wire.begin(), wire.end());
  for (size_t at : {size_t{0}, size_t{1000}, size_t{300000}, message.size() - 64}) {
    EXPECT_EQ(onWire.find(std::string(message.data() + at, 64)), std::string::npos) << at;
  }
  p.deliver(wire);
  std::vector<char> got(message.size());
  ASSERT_TRUE(p.receive(got, 9));
  EXPECT_EQ(got, message);
}

TEST(TcpSealedTest, AFlippedBitAnywhereFailsTheReceive) {
  const std::vector<char> message = pattern(5000, 6);
  const size_t header = sizeof(FrameHeader);
  // In the record, in the tag; a flip in the header's tag or length is refused as a mismatch before that.
  for (size_t at : {header, header + 2500, header + 4999, header + 5000, header + 5015}) {
    SCOPED_TRACE(at);
    RelayedPair p;
    std::vector<uint8_t> wire = p.sendAndCapture(message, 3);
    wire[at] ^= 0x04;
    p.deliver(wire);
    std::vector<char> got(message.size());
    const Error e = errorFrom([&] { p.receive(got, 3); });
    EXPECT_EQ(e.failure(), Failure::kCorrupt) << e.what();
    EXPECT_NE(std::string(e.what()).find("rank 1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("peer 0"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("does not authenticate"), std::string::npos) << e.what();
  }
}

TEST(TcpSealedTest, AReplayedFrameFailsTheReceive) {
  RelayedPair p;
  const std::vector<char> message = pattern(3000, 7);
  const std::vector<uint8_t> wire = p.sendAndCapture(message, 4);
  p.deliver(wire);
  std::vector<char> got(message.size());
  ASSERT_TRUE(p.receive(got, 4));
  EXPECT_EQ(got, message);
  // The same frame again, where the next message of the same size and tag is expected.
  p.deliver(wire);
  const Error e = errorFrom([&] { p.receive(got, 4); });
  EXPECT_EQ(e.failure(), Failure::kCorrupt) << e.what();
  EXPECT_NE(std::string(e.what()).find("record 1"), std::string::npos) << e.what();
}

TEST(TcpSealedTest, AnotherKeyFailsTheReceive) {
  RelayedPair p(false);
  const std::vector<char> message = pattern(100, 8);
  p.deliver(p.sendAndCapture(message, 2));
  std::vector<char> got(message.size());
  const Error e = errorFrom([&] { p.receive(got, 2); });
  EXPECT_EQ(e.failure(), Failure::kCorrupt) << e.what();
}

}  // namespace
}  // namespace chorus::test
