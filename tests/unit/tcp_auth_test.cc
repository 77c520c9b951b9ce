// Two TCP transports in one process: with a shared secret they connect; a stranger at the listening port
// (garbage, or a well-formed hello with the wrong secret) is refused and logged while the ranks connect anyway;
// ranks with different secrets fail, naming the peer.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <future>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/security/channel_auth.h"
#include "tests/harness/raw_socket.h"
#include "transports/tcp/tcp_hello.h"
#include "transports/tcp/tcp_transport.h"

namespace chorus {
namespace {

using namespace std::chrono_literals;

const std::string kJobKey = "tcp-auth-test/e0/";

// A rank's transport and its card, listening on loopback.
struct Rank {
  Rank(int rank, const std::string& secret) : transport(rank, kJobKey, 1, "lo", secret) {
    card.rank = rank;
    transport.describeSelf(card);
  }
  TcpTransport transport;
  PeerCard card;
};

uint16_t portOf(const PeerCard& card) {
  const std::string& addr = card.entries.at("tcp.addr");
  return static_cast<uint16_t>(std::stoi(addr.substr(addr.rfind(':') + 1)));
}

using test::closedByPeer;

// A blocking loopback connection with a receive timeout.
int connectTo(uint16_t port) { return test::connectTo("127.0.0.1", port); }

std::vector<std::unique_ptr<Connection>> connect(Rank& self, Rank& peer) {
  return self.transport.connectAll(self.card, {peer.card}, Deadline::after(20));
}

TEST(TcpAuthTest, StrangersAreRefusedAndLoggedWhileTheRanksConnect) {
  Rank r0(0, "shared"), r1(1, "shared");
  testing::internal::CaptureStderr();
  // Rank 1 waits for rank 0 to dial it; strangers get there first.
  auto accepting = std::async(std::launch::async, [&] { return connect(r1, r0); });
  const uint16_t port = portOf(r1.card);
  int garbage = connectTo(port);
  std::vector<uint8_t> junk(TcpHello::kBytes, 0x42);
  ASSERT_EQ(::send(garbage, junk.data(), junk.size(), MSG_NOSIGNAL), static_cast<ssize_t>(junk.size()));
  EXPECT_TRUE(closedByPeer(garbage));
  ::close(garbage);

  int impostor = connectTo(port);
  TcpHello hello;
  hello.from = 0;
  hello.to = 1;
  hello.flags = TcpHello::kFlagAuthenticate;
  hello.jobKeyHash = sha256(kJobKey);
  auto bytes = hello.encode();
  ASSERT_EQ(::send(impostor, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
  try {
    authenticateChannel(impostor, "guessed", tcpAuthContext(bytes), ChannelRole::kInitiator, Deadline::after(10),
                        "impostor");
    ADD_FAILURE() << "the impostor was accepted";
  } catch (const AuthenticationError& e) {
    EXPECT_EQ(e.reason(), AuthFailure::kWrongSecret) << e.what();
  }
  EXPECT_TRUE(closedByPeer(impostor));
  ::close(impostor);

  auto dialled = connect(r0, r1);
  ASSERT_EQ(accepting.wait_for(30s), std::future_status::ready);
  auto accepted = accepting.get();
  std::string log = testing::internal::GetCapturedStderr();
  ASSERT_EQ(dialled.size(), 1u);
  ASSERT_EQ(accepted.size(), 1u);
  EXPECT_EQ(dialled[0]->peer(), 1);
  EXPECT_EQ(accepted[0]->peer(), 0);
  EXPECT_NE(log.find("refused a connection from 127.0.0.1:"), std::string::npos) << log;
  EXPECT_NE(log.find("not a Chorus hello"), std::string::npos) << log;
  EXPECT_NE(log.find("authentication failed (wrong secret)"), std::string::npos) << log;

  // The connection works: one message each way.
  int ping = 7, pong = 0;
  dialled[0]->isend(&ping, sizeof(ping), 1);
  accepted[0]->irecv(&pong, sizeof(pong), 1);
  for (int i = 0; i < 100000 && (dialled[0]->busy() || accepted[0]->busy()); ++i) {
    dialled[0]->progress();
    accepted[0]->progress();
  }
  EXPECT_EQ(pong, 7);
}

TEST(TcpAuthTest, RanksWithDifferentSecretsFailNamingThePeer) {
  Rank r0(0, "one"), r1(1, "two");
  testing::internal::CaptureStderr();
  auto accepting =
      std::async(std::launch::async, [&] { return r1.transport.connectAll(r1.card, {r0.card}, Deadline::after(2)); });
  std::string dialError;
  try {
    connect(r0, r1);
  } catch (const Error& e) {
    dialError = e.what();
  }
  ASSERT_EQ(accepting.wait_for(30s), std::future_status::ready);
  std::string acceptError;
  try {
    accepting.get();
  } catch (const Error& e) {
    acceptError = e.what();
  }
  std::string log = testing::internal::GetCapturedStderr();
  EXPECT_NE(dialError.find("rank 0, peer 1, tcp connect to"), std::string::npos) << dialError;
  EXPECT_NE(dialError.find("wrong secret"), std::string::npos) << dialError;
  // Rank 1 saw a stranger (logged) and then ran out of time waiting for rank 0.
  EXPECT_NE(acceptError.find("timed out waiting for ranks 0"), std::string::npos) << acceptError;
  EXPECT_NE(log.find("authentication failed (wrong secret)"), std::string::npos) << log;
}

TEST(TcpAuthTest, ARankWithASecretAndOneWithoutDoNotConnect) {
  Rank r0(0, ""), r1(1, "shared");
  testing::internal::CaptureStderr();
  auto accepting = std::async(std::launch::async, [&] {
    try {
      r1.transport.connectAll(r1.card, {r0.card}, Deadline::after(1));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("connected");
  });
  // Without a secret the dialler is done once its hello is written; rank 1 refuses it.
  auto dialled = connect(r0, r1);
  ASSERT_EQ(accepting.wait_for(30s), std::future_status::ready);
  std::string acceptOutcome = accepting.get();
  std::string log = testing::internal::GetCapturedStderr();
  EXPECT_NE(acceptOutcome.find("timed out"), std::string::npos) << acceptOutcome;
  EXPECT_NE(log.find("the peer presented no secret"), std::string::npos) << log;
}

}  // namespace
}  // namespace chorus
