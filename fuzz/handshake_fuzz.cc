// Fuzzes the connection handshake as an accepting rank sees it: the TCP hello (decode, then the checks against
// what this rank expects), then the channel handshake messages, both as pure state machine input (with an
// honest peer whose messages the input may corrupt, so the later states are reached too) and through
// ChannelAuthenticator's socket I/O over a socketpair.
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/security/channel_auth.h"
#include "transports/tcp/tcp_hello.h"

namespace {

using chorus::ChannelHandshake;
using chorus::ChannelRole;

constexpr char kSecret[] = "fuzz-secret";

ChannelHandshake::Nonce nonceOf(uint8_t seed) {
  ChannelHandshake::Nonce n;
  for (size_t i = 0; i < n.size(); ++i) n[i] = static_cast<uint8_t>(seed + 7 * i);
  return n;
}

void checkHello(std::span<const uint8_t> in) {
  chorus::TcpHello hello;
  std::string problem;
  if (!chorus::TcpHello::decode(in.first(chorus::TcpHello::kBytes), &hello, &problem)) {
    if (problem.empty()) std::abort();
    return;
  }
  // Round trip: what decodes encodes to the same bytes.
  auto again = hello.encode();
  if (!std::equal(again.begin(), again.end(), in.begin())) std::abort();
  std::map<int, std::vector<bool>> taken = {{0, {false, true}}, {1, {false}}, {5, {true}}};
  (void)chorus::incomingHelloProblem(hello, 2, hello.jobKeyHash, in[0] & 1, taken);
  (void)chorus::incomingHelloProblem(hello, 2, chorus::sha256("job"), true, taken);
}

// The state machine against raw input, or against an honest peer whose messages get the input's XOR masks.
void drive(std::span<const uint8_t> in, uint8_t mode) {
  const ChannelRole role = (mode & 1) ? ChannelRole::kInitiator : ChannelRole::kAcceptor;
  const ChannelRole other = (mode & 1) ? ChannelRole::kAcceptor : ChannelRole::kInitiator;
  ChannelHandshake self(kSecret, "ctx", role, nonceOf(1));
  std::vector<uint8_t> toPeer = self.start();
  if (mode & 2) {
    ChannelHandshake peer((mode & 4) ? "another-secret" : kSecret, (mode & 8) ? "other-ctx" : "ctx", other, nonceOf(2));
    std::vector<uint8_t> fromPeer = peer.start();
    size_t at = 0;
    for (int round = 0; round < 4 && !self.failed() && !self.succeeded(); ++round) {
      std::vector<uint8_t> reply, peerReply;
      peer.feed(toPeer, &peerReply);
      for (uint8_t& b : fromPeer) b ^= at < in.size() ? in[at++] : 0;  // corrupt what the peer says
      self.feed(fromPeer, &reply);
      toPeer = std::move(reply);
      fromPeer = std::move(peerReply);
      if (fromPeer.empty()) break;
    }
    if (!(mode & 0x1c) && in.empty() && !self.succeeded()) std::abort();  // honest, same secret: must succeed
    return;
  }
  while (!in.empty() && self.bytesWanted() > 0) {
    size_t n = std::min(in.size(), self.bytesWanted());
    std::vector<uint8_t> reply;
    self.feed(in.first(n), &reply);
    in = in.subspan(n);
  }
  if (self.succeeded()) std::abort();  // nobody without the secret can make this side accept
}

// The socket path: the input arrives, then the peer shuts down its sending side.
void overSocket(std::span<const uint8_t> in, uint8_t mode) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return;
  if (!in.empty() && ::send(sv[1], in.data(), in.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(in.size())) std::abort();
  ::shutdown(sv[1], SHUT_WR);
  try {
    chorus::authenticateChannel(sv[0], kSecret, "ctx", (mode & 1) ? ChannelRole::kInitiator : ChannelRole::kAcceptor,
                                chorus::Deadline::after(5), "fuzz");
    std::abort();  // cannot succeed without the secret
  } catch (const chorus::AuthenticationError& e) {
    if (e.reason() == chorus::AuthFailure::kNone || e.reason() == chorus::AuthFailure::kTimedOut) std::abort();
  }
  ::close(sv[0]);
  ::close(sv[1]);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t mode = data[0];
  std::span<const uint8_t> in(data + 1, size - 1);
  if (in.size() >= chorus::TcpHello::kBytes && (mode & 0x80)) {
    checkHello(in);
    in = in.subspan(chorus::TcpHello::kBytes);
  }
  if (mode & 0x40) {
    overSocket(in, mode);
  } else {
    drive(in, mode);
  }
  return 0;
}
