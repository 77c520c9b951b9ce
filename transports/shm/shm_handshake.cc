#include "transports/shm/shm_handshake.h"

#include <poll.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/deadline_wait.h"
#include "core/error.h"

namespace chorus {

namespace {

// An abstract address: sun_path starts with NUL, the name follows, and the length counts exactly its bytes.
socklen_t abstractAddress(const std::string& name, sockaddr_un* addr) {
  std::memset(addr, 0, sizeof(*addr));
  addr->sun_family = AF_UNIX;
  size_t n = std::min(name.size(), sizeof(addr->sun_path) - 1);
  std::memcpy(addr->sun_path + 1, name.data(), n);
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n);
}

// Closes every descriptor carried in a message's control data except the first, which is returned (or -1).
int takeDescriptors(msghdr& msg, bool* extra) {
  int first = -1;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      if (first < 0) {
        first = fd;
      } else {
        ::close(fd);
        *extra = true;
      }
    }
  }
  return first;
}

}  // namespace

uint64_t shmJobHash(const std::string& jobKey) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : jobKey) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

int shmListen(const std::string& name, std::string* error) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = std::string("socket(AF_UNIX) failed: ") + std::strerror(errno);
    return -1;
  }
  sockaddr_un addr;
  socklen_t len = abstractAddress(name, &addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(fd, 4096) != 0) {
    *error = "binding the abstract unix socket @" + name + " failed: " + std::strerror(errno);
    ::close(fd);
    return -1;
  }
  return fd;
}

int shmDial(const std::string& name, Deadline deadline, const std::string& context) {
  sockaddr_un addr;
  socklen_t len = abstractAddress(name, &addr);
  int delayMs = 1;
  for (;;) {
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) throwSystemError(context, "socket(AF_UNIX)", errno);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), len) == 0) return fd;
    int err = errno;
    ::close(fd);
    // EAGAIN: the listener's backlog is full; ECONNREFUSED: nobody listens (yet, or any more). Both may pass.
    if (err != EAGAIN && err != ECONNREFUSED && err != EINTR) {
      throwSystemError(context + ": connect to @" + name, "connect", err);
    }
    throwIfExpired(deadline, [&] { return context + ": connect to @" + name + " timed out: " + std::strerror(err); });
    sleepWithin(deadline, delayMs);
    delayMs = std::min(delayMs * 2, 100);
  }
}

void shmSendHello(int fd, const ShmHello& hello, int passFd, Deadline deadline, const std::string& context) {
  const char* p = reinterpret_cast<const char*>(&hello);
  size_t left = sizeof(hello);
  bool fdSent = false;
  while (left > 0) {
    iovec iov{const_cast<char*>(p), left};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
    if (!fdSent) {
      msg.msg_control = control;
      msg.msg_controllen = sizeof(control);
      cmsghdr* c = CMSG_FIRSTHDR(&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int));
      std::memcpy(CMSG_DATA(c), &passFd, sizeof(int));
    }
    ssize_t r = ::sendmsg(fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (r > 0) {
      fdSent = true;
      p += r;
      left -= static_cast<size_t>(r);
      continue;
    }
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
      throwSystemError(context + ": sending the hello", "sendmsg", errno);
    throwIfExpired(deadline, [&] { return context + ": timed out sending the hello"; });
    pollfd pfd{fd, POLLOUT, 0};
    pollWithin({&pfd, 1}, deadline, 100, context + ": sending the hello");
  }
}

bool shmPeerCredentials(int fd, ucred* cred) {
  socklen_t len = sizeof(*cred);
  return ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, cred, &len) == 0 && len == sizeof(*cred);
}

ShmHelloReader::~ShmHelloReader() {
  if (fd_ >= 0) ::close(fd_);
  if (passedFd_ >= 0) ::close(passedFd_);
}

ShmHelloReader::ShmHelloReader(ShmHelloReader&& o) noexcept
    : fd_(o.fd_), hello_(o.hello_), got_(o.got_), passedFd_(o.passedFd_), extraFds_(o.extraFds_) {
  o.fd_ = -1;
  o.passedFd_ = -1;
}

ShmHelloReader& ShmHelloReader::operator=(ShmHelloReader&& o) noexcept {
  if (this != &o) {
    std::swap(fd_, o.fd_);
    std::swap(hello_, o.hello_);
    std::swap(got_, o.got_);
    std::swap(passedFd_, o.passedFd_);
    std::swap(extraFds_, o.extraFds_);
  }
  return *this;
}

int ShmHelloReader::releaseSocket() {
  int fd = fd_;
  fd_ = -1;
  return fd;
}

int ShmHelloReader::releasePassedFd() {
  int fd = passedFd_;
  passedFd_ = -1;
  return fd;
}

bool ShmHelloReader::step(std::string* why) {
  why->clear();
  while (got_ < sizeof(hello_)) {
    iovec iov{reinterpret_cast<char*>(&hello_) + got_, sizeof(hello_) - got_};
    alignas(cmsghdr) char control[CMSG_SPACE(4 * sizeof(int))];
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    ssize_t r = ::recvmsg(fd_, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;
    if (r < 0) {
      *why = std::string("recvmsg failed: ") + std::strerror(errno);
      return false;
    }
    if (r == 0) {
      *why = "closed before its hello was complete";
      return false;
    }
    int fd = takeDescriptors(msg, &extraFds_);
    if (fd >= 0) {
      if (passedFd_ >= 0) {
        ::close(fd);
        extraFds_ = true;
      } else {
        passedFd_ = fd;
      }
    }
    if (msg.msg_flags & MSG_CTRUNC) extraFds_ = true;
    got_ += static_cast<size_t>(r);
  }
  if (hello_.magic != kShmHelloMagic || hello_.version != kShmHelloVersion) {
    *why = "not a Chorus shm hello";
    return false;
  }
  if (extraFds_ || passedFd_ < 0) {
    *why = "hello without exactly one descriptor";
    return false;
  }
  return true;
}

}  // namespace chorus
