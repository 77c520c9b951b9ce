#include "core/security/channel_auth.h"

#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "core/deadline_wait.h"

namespace chorus {

ChannelAuthenticator::ChannelAuthenticator(int fd, std::string_view secret, std::string_view context, ChannelRole role,
                                           std::string who)
    : fd_(fd), who_(std::move(who)), handshake_(secret, context, role), outbox_(handshake_.start()) {}

void ChannelAuthenticator::throwFailure() {
  // A refusal verdict may be queued: let the peer hear why before the caller closes the socket.
  if (!outbox_.empty()) {
    try {
      flush();
    } catch (...) {
    }
  }
  throw AuthenticationError(
      handshake_.failure(),
      who_ + ": authentication failed (" + authFailureName(handshake_.failure()) + "): " + handshake_.problem());
}

void ChannelAuthenticator::timedOut(double seconds) {
  char text[160];
  std::snprintf(text, sizeof(text), "no answer within %.1fs while waiting for %s", seconds, handshake_.waitingFor());
  handshake_.fail(AuthFailure::kTimedOut, text);
  outbox_.clear();
  throwFailure();
}

// True when the outbox is empty; false when the socket is full.
bool ChannelAuthenticator::flush() {
  while (outboxSent_ < outbox_.size()) {
    ssize_t n = ::send(fd_, outbox_.data() + outboxSent_, outbox_.size() - outboxSent_, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0) {
      outboxSent_ += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;
    int err = errno;
    outbox_.clear();
    outboxSent_ = 0;
    if (err == EPIPE || err == ECONNRESET) {
      handshake_.fail(AuthFailure::kClosed, "the peer closed the connection while this side sent its handshake");
    } else {
      handshake_.fail(AuthFailure::kSystem, std::string("send failed: ") + std::strerror(err));
    }
    throwFailure();
  }
  outbox_.clear();
  outboxSent_ = 0;
  return true;
}

bool ChannelAuthenticator::advance() {
  for (;;) {
    if (!flush()) return false;
    if (handshake_.failed()) throwFailure();
    if (handshake_.succeeded()) return true;
    const size_t want = handshake_.bytesWanted();
    const size_t have = inbox_.size();
    inbox_.resize(want);
    // Exactly the rest of this message: bytes after the handshake belong to whoever uses the socket next.
    ssize_t n = ::recv(fd_, inbox_.data() + have, want - have, MSG_DONTWAIT);
    if (n <= 0) inbox_.resize(have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;
    if (n == 0) {
      handshake_.fail(AuthFailure::kClosed, std::string("the peer closed the connection while this side waited for ") +
                                                handshake_.waitingFor() + (have ? " (mid-message)" : "") +
                                                " (a peer without the secret?)");
      throwFailure();
    }
    if (n < 0) {
      const int err = errno;
      handshake_.fail(err == ECONNRESET ? AuthFailure::kClosed : AuthFailure::kSystem,
                      std::string("recv failed: ") + std::strerror(err));
      throwFailure();
    }
    inbox_.resize(have + static_cast<size_t>(n));
    if (inbox_.size() < want) continue;
    std::vector<uint8_t> message;
    message.swap(inbox_);
    handshake_.feed(message, &outbox_);
  }
}

void authenticateChannel(int fd, std::string_view secret, std::string_view context, ChannelRole role, Deadline deadline,
                         const std::string& who) {
  const auto start = Deadline::Clock::now();
  ChannelAuthenticator auth(fd, secret, context, role, who);
  while (!auth.advance()) {
    if (deadline.expired()) {
      auth.timedOut(std::chrono::duration<double>(Deadline::Clock::now() - start).count());
    }
    pollfd p{fd, auth.pollEvents(), 0};
    pollWithin({&p, 1}, deadline, 1000, who + ": authentication");
  }
}

void authenticateChannel(int fd, std::string_view secret, ChannelRole role, Deadline deadline, const std::string& who) {
  authenticateChannel(fd, secret, "chorus", role, deadline, who);
}

}  // namespace chorus
