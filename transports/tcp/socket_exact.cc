#include "transports/tcp/socket_exact.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>

#include "core/deadline_wait.h"
#include "core/error.h"

namespace chorus {
namespace {

// `call(at)` moves what is left from byte `at` on (one send or recv); until all n bytes have gone.
template <typename Call>
void moveExact(int fd, size_t n, bool send, Deadline deadline, const std::string& context, Call call) {
  for (size_t at = 0; at < n;) {
    const ssize_t r = call(at);
    if (r > 0) {
      at += static_cast<size_t>(r);
      continue;
    }
    if (r == 0 && !send) throw Error(chorusRemoteError, context + ": the peer closed the connection");
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK) throwSystemError(context, send ? "send" : "recv", errno);
    throwIfExpired(deadline, [&] { return context + (send ? ": timed out sending" : ": timed out receiving"); });
    pollfd pfd{fd, static_cast<short>(send ? POLLOUT : POLLIN), 0};
    pollWithin({&pfd, 1}, deadline, 100, context);
  }
}

}  // namespace

void sendExact(int fd, const void* buf, size_t bytes, Deadline deadline, const std::string& context) {
  const char* p = static_cast<const char*>(buf);
  moveExact(fd, bytes, true, deadline, context,
            [&](size_t at) { return ::send(fd, p + at, bytes - at, MSG_DONTWAIT | MSG_NOSIGNAL); });
}

void recvExact(int fd, void* buf, size_t bytes, Deadline deadline, const std::string& context) {
  char* p = static_cast<char*>(buf);
  moveExact(fd, bytes, false, deadline, context,
            [&](size_t at) { return ::recv(fd, p + at, bytes - at, MSG_DONTWAIT); });
}

}  // namespace chorus
