// Mutual challenge-response authentication over a connected stream socket (TCP or unix), by a shared secret.
//
// Usage, right after connect()/accept() and before anything else is trusted on the socket:
//   authenticateChannel(fd, secret, "my-purpose", ChannelRole::kInitiator, deadline, "rank 1, peer 2, shm connect");
// on the connecting end, ChannelRole::kAcceptor on the accepting end. Both ends must pass the same secret and
// the same context string (bind it to the purpose, e.g. the job key, so a proof made for one channel is useless on
// another). It works on blocking and non-blocking descriptors alike (it uses MSG_DONTWAIT and poll), consumes
// exactly the handshake's bytes (what the peer sends afterwards stays in the socket), and never blocks past the
// deadline. On any failure it throws AuthenticationError (code chorusRemoteError) whose message is
// "<who>: authentication failed (<wrong secret|malformed|timed out|closed|system error>): <details>".
// The wire protocol is in channel_handshake.h. Loops that serve many sockets at once use ChannelAuthenticator.
#pragma once

#include <poll.h>

#include <string>
#include <string_view>
#include <vector>

#include "core/deadline.h"
#include "core/error.h"
#include "core/security/channel_handshake.h"

namespace chorus {

// A failed handshake: an Error with code chorusRemoteError that also says why, as a value.
class AuthenticationError : public Error {
 public:
  AuthenticationError(AuthFailure reason, const std::string& message)
      : Error(chorusRemoteError, message), reason_(reason) {}
  AuthFailure reason() const noexcept { return reason_; }

 private:
  AuthFailure reason_;
};

// Authenticates both ends of fd before the deadline, or throws AuthenticationError. who names this end and its
// peer for the message (errorContext: "rank 1, tcp accept from 10.0.0.2:5123").
void authenticateChannel(int fd, std::string_view secret, std::string_view context, ChannelRole role, Deadline deadline,
                         const std::string& who);
// The same with the context "chorus": for channels whose purpose is already fixed by who may connect to them.
void authenticateChannel(int fd, std::string_view secret, ChannelRole role, Deadline deadline, const std::string& who);

// The same handshake driven step by step without blocking, for poll loops that serve several sockets.
class ChannelAuthenticator {
 public:
  // Queues this end's challenge; nothing is sent until advance().
  ChannelAuthenticator(int fd, std::string_view secret, std::string_view context, ChannelRole role, std::string who);
  // Moves what the socket allows without blocking; true once both ends are authenticated.
  // Throws AuthenticationError on failure (after a best-effort refusal to the peer).
  bool advance();
  // The poll events to wait for while advance() returns false.
  short pollEvents() const { return outbox_.empty() ? POLLIN : POLLOUT; }
  // Throws AuthenticationError for a deadline that passed, naming what was awaited and for how long.
  [[noreturn]] void timedOut(double seconds);
  // Once advance() returned true: the handshake, for its record keys.
  const ChannelHandshake& handshake() const { return handshake_; }

 private:
  [[noreturn]] void throwFailure();
  bool flush();

  int fd_;
  std::string who_;
  ChannelHandshake handshake_;
  std::vector<uint8_t> outbox_;
  size_t outboxSent_ = 0;
  std::vector<uint8_t> inbox_;
};

}  // namespace chorus
