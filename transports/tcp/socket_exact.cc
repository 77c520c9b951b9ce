#include "transports/tcp/socket_exact.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>

#include "core/error.h"

namespace chorus {
namespace {

void moveExact(int fd, char* p, size_t n, bool send, Deadline deadline, const std::string& context) {
  while (n > 0) {
    const ssize_t r = send ? ::send(fd, p, n, MSG_DONTWAIT | MSG_NOSIGNAL) : ::recv(fd, p, n, MSG_DONTWAIT);
    if (r > 0) {
      p += r;
      n -= static_cast<size_t>(r);
      continue;
    }
    if (r == 0 && !send) throw Error(chorusRemoteError, context + ": the peer closed the connection");
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK) throwSystemError(context, send ? "send" : "recv", errno);
    if (deadline.expired()) throw Error(chorusTimeout, context + (send ? ": timed out sending" : ": timed out receiving"));
    pollfd pfd{fd, static_cast<short>(send ? POLLOUT : POLLIN), 0};
    ::poll(&pfd, 1, deadline.remainingMs(100));
  }
}

}  // namespace

void sendExact(int fd, const void* buf, size_t bytes, Deadline deadline, const std::string& context) {
  moveExact(fd, const_cast<char*>(static_cast<const char*>(buf)), bytes, true, deadline, context);
}

void recvExact(int fd, void* buf, size_t bytes, Deadline deadline, const std::string& context) {
  moveExact(fd, static_cast<char*>(buf), bytes, false, deadline, context);
}

}  // namespace chorus
