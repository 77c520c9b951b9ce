// The channel challenge-response: both ends with the same secret succeed and leave the stream in step; a wrong
// secret, a missing one, garbage, truncation, silence, reflection and replay all fail with the reason in words.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <string>
#include <vector>

#include "core/security/channel_auth.h"
#include "core/security/channel_handshake.h"

namespace chorus {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// A connected pair of unix stream sockets, closed at the end of the test.
struct SocketPair {
  SocketPair() { EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fd), 0); }
  ~SocketPair() {
    for (int f : fd) {
      if (f >= 0) ::close(f);
    }
  }
  void closeEnd(int i) {
    ::close(fd[i]);
    fd[i] = -1;
  }
  int fd[2] = {-1, -1};
};

struct Outcome {
  bool ok = false;
  AuthFailure reason = AuthFailure::kNone;
  std::string message;
};

Outcome authenticate(int fd, const std::string& secret, ChannelRole role, double seconds = 10,
                     const std::string& context = "test") {
  Outcome o;
  try {
    authenticateChannel(fd, secret, context, role, Deadline::after(seconds),
                        role == ChannelRole::kInitiator ? "initiator" : "acceptor");
    o.ok = true;
  } catch (const AuthenticationError& e) {
    o.reason = e.reason();
    o.message = e.what();
    EXPECT_EQ(e.code(), chorusRemoteError);
  }
  return o;
}

std::vector<uint8_t> readExactly(int fd, size_t n) {
  std::vector<uint8_t> out(n);
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::recv(fd, out.data() + got, n - got, 0);
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  out.resize(got);
  return out;
}

void writeAll(int fd, const std::vector<uint8_t>& bytes) {
  ASSERT_EQ(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
}

TEST(SecurityChannelAuthTest, SameSecretSucceedsBothWaysAndLeavesLaterBytesInTheStream) {
  SocketPair sp;
  auto acceptor = std::async(std::launch::async, [&] {
    Outcome o = authenticate(sp.fd[1], "s3cret", ChannelRole::kAcceptor);
    const char after[] = "after";
    EXPECT_EQ(::send(sp.fd[1], after, 5, MSG_NOSIGNAL), 5);
    return o;
  });
  Outcome initiator = authenticate(sp.fd[0], "s3cret", ChannelRole::kInitiator);
  ASSERT_EQ(acceptor.wait_for(20s), std::future_status::ready);
  Outcome a = acceptor.get();
  EXPECT_TRUE(initiator.ok) << initiator.message;
  EXPECT_TRUE(a.ok) << a.message;
  std::vector<uint8_t> next = readExactly(sp.fd[0], 5);
  EXPECT_EQ(std::string(next.begin(), next.end()), "after");
}

TEST(SecurityChannelAuthTest, WrongSecretFailsOnBothEndsNamingWhoAndWhy) {
  SocketPair sp;
  auto acceptor =
      std::async(std::launch::async, [&] { return authenticate(sp.fd[1], "right", ChannelRole::kAcceptor); });
  Outcome i = authenticate(sp.fd[0], "wrong", ChannelRole::kInitiator);
  ASSERT_EQ(acceptor.wait_for(20s), std::future_status::ready);
  Outcome a = acceptor.get();
  for (const Outcome* o : {&i, &a}) {
    EXPECT_FALSE(o->ok);
    EXPECT_EQ(o->reason, AuthFailure::kWrongSecret) << o->message;
    EXPECT_NE(o->message.find("wrong secret"), std::string::npos) << o->message;
  }
  EXPECT_EQ(i.message.rfind("initiator: authentication failed (wrong secret)", 0), 0u) << i.message;
  EXPECT_EQ(a.message.rfind("acceptor: authentication failed (wrong secret)", 0), 0u) << a.message;
}

TEST(SecurityChannelAuthTest, ADifferentContextFailsLikeAWrongSecret) {
  SocketPair sp;
  auto acceptor = std::async(std::launch::async,
                             [&] { return authenticate(sp.fd[1], "same", ChannelRole::kAcceptor, 10, "job A"); });
  Outcome i = authenticate(sp.fd[0], "same", ChannelRole::kInitiator, 10, "job B");
  ASSERT_EQ(acceptor.wait_for(20s), std::future_status::ready);
  EXPECT_EQ(i.reason, AuthFailure::kWrongSecret) << i.message;
  EXPECT_EQ(acceptor.get().reason, AuthFailure::kWrongSecret);
}

TEST(SecurityChannelAuthTest, APeerWithoutTheSecretThatHangsUpIsReportedAsClosed) {
  SocketPair sp;
  // The peer has no secret: it reads the challenge it cannot answer and closes.
  auto peer = std::async(std::launch::async, [&] {
    readExactly(sp.fd[1], ChannelHandshake::kChallengeBytes);
    sp.closeEnd(1);
  });
  Outcome o = authenticate(sp.fd[0], "s3cret", ChannelRole::kAcceptor);
  ASSERT_EQ(peer.wait_for(20s), std::future_status::ready);
  EXPECT_FALSE(o.ok);
  EXPECT_EQ(o.reason, AuthFailure::kClosed) << o.message;
  EXPECT_NE(o.message.find("closed the connection"), std::string::npos) << o.message;
}

TEST(SecurityChannelAuthTest, GarbageIsMalformed) {
  SocketPair sp;
  writeAll(sp.fd[1], std::vector<uint8_t>(ChannelHandshake::kChallengeBytes, 'G'));
  Outcome o = authenticate(sp.fd[0], "s3cret", ChannelRole::kAcceptor);
  EXPECT_EQ(o.reason, AuthFailure::kMalformed) << o.message;
  EXPECT_NE(o.message.find("bad magic"), std::string::npos) << o.message;
}

TEST(SecurityChannelAuthTest, ATruncatedChallengeThenCloseIsReported) {
  SocketPair sp;
  ChannelHandshake honest("s3cret", "test", ChannelRole::kInitiator);
  std::vector<uint8_t> challenge = honest.start();
  challenge.resize(17);
  writeAll(sp.fd[1], challenge);
  ::shutdown(sp.fd[1], SHUT_WR);
  Outcome o = authenticate(sp.fd[0], "s3cret", ChannelRole::kAcceptor);
  EXPECT_EQ(o.reason, AuthFailure::kClosed) << o.message;
  EXPECT_NE(o.message.find("mid-message"), std::string::npos) << o.message;
}

TEST(SecurityChannelAuthTest, ASilentPeerTimesOutAtTheDeadline) {
  SocketPair sp;
  auto start = Clock::now();
  Outcome o = authenticate(sp.fd[0], "s3cret", ChannelRole::kInitiator, 0.3);
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_EQ(o.reason, AuthFailure::kTimedOut) << o.message;
  EXPECT_NE(o.message.find("timed out"), std::string::npos) << o.message;
  EXPECT_NE(o.message.find("the peer's challenge"), std::string::npos) << o.message;
  EXPECT_GE(seconds, 0.25);
  EXPECT_LT(seconds, 3.0);
}

TEST(SecurityChannelAuthTest, AReflectedChallengeIsRefused) {
  // The "peer" sends our own challenge back: same role claimed, then with the role byte flipped.
  for (bool flipRole : {false, true}) {
    SocketPair pair;
    auto mirror = std::async(std::launch::async, [&] {
      std::vector<uint8_t> c = readExactly(pair.fd[1], ChannelHandshake::kChallengeBytes);
      if (flipRole && c.size() == ChannelHandshake::kChallengeBytes)
        c[5] = static_cast<uint8_t>(ChannelRole::kAcceptor);
      writeAll(pair.fd[1], c);
    });
    Outcome o = authenticate(pair.fd[0], "s3cret", ChannelRole::kInitiator);
    ASSERT_EQ(mirror.wait_for(20s), std::future_status::ready);
    EXPECT_EQ(o.reason, AuthFailure::kMalformed) << o.message;
    EXPECT_NE(o.message.find("reflected"), std::string::npos) << o.message;
  }
}

TEST(SecurityChannelAuthTest, AReflectedProofDoesNotVerify) {
  // An attacker without the secret answers with a fresh challenge, then returns our own proof as its own.
  ChannelHandshake victim("s3cret", "test", ChannelRole::kAcceptor);
  ChannelHandshake::Nonce attackerNonce{};
  attackerNonce.fill(0x5a);
  ChannelHandshake attacker("attacker-guess", "test", ChannelRole::kInitiator, attackerNonce);
  std::vector<uint8_t> victimProof, ignored;
  victim.feed(attacker.start(), &victimProof);
  ASSERT_EQ(victimProof.size(), ChannelHandshake::kProofBytes);
  std::vector<uint8_t> verdict;
  victim.feed(victimProof, &verdict);
  EXPECT_TRUE(victim.failed());
  EXPECT_EQ(victim.failure(), AuthFailure::kWrongSecret);
  ASSERT_EQ(verdict.size(), ChannelHandshake::kVerdictBytes);
  EXPECT_EQ(verdict[4], 0) << "the refusal verdict tells the peer";
}

TEST(SecurityChannelAuthTest, ARecordedSessionCannotBeReplayed) {
  // A genuine session between I and A1, recorded.
  ChannelHandshake initiator("s3cret", "test", ChannelRole::kInitiator);
  ChannelHandshake first("s3cret", "test", ChannelRole::kAcceptor);
  std::vector<uint8_t> iChallenge = initiator.start(), iProof, aProof, iVerdict, aVerdict;
  initiator.feed(first.start(), &iProof);
  first.feed(iChallenge, &aProof);
  initiator.feed(aProof, &iVerdict);
  first.feed(iProof, &aVerdict);
  first.feed(iVerdict, &aVerdict);
  std::vector<uint8_t> none;
  initiator.feed(std::vector<uint8_t>(aVerdict.end() - ChannelHandshake::kVerdictBytes, aVerdict.end()), &none);
  ASSERT_TRUE(first.succeeded()) << first.problem();
  ASSERT_TRUE(initiator.succeeded()) << initiator.problem();
  // The same initiator messages replayed to a new acceptor, which draws a new nonce.
  ChannelHandshake second("s3cret", "test", ChannelRole::kAcceptor);
  std::vector<uint8_t> reply;
  second.feed(iChallenge, &reply);
  reply.clear();
  second.feed(iProof, &reply);
  EXPECT_TRUE(second.failed());
  EXPECT_EQ(second.failure(), AuthFailure::kWrongSecret) << second.problem();
}

TEST(SecurityChannelAuthTest, MessagesOfTheWrongSizeAndEmptySecretsAreRefused) {
  ChannelHandshake h("s3cret", "test", ChannelRole::kAcceptor);
  std::vector<uint8_t> reply;
  h.feed(std::vector<uint8_t>(ChannelHandshake::kChallengeBytes + 1, 0), &reply);
  EXPECT_EQ(h.failure(), AuthFailure::kMalformed);
  EXPECT_EQ(h.bytesWanted(), 0u);
  EXPECT_THROW(ChannelHandshake("", "test", ChannelRole::kAcceptor), Error);
}

}  // namespace
}  // namespace chorus
