// MSG_ZEROCOPY against plain copied sends over one TCP connection (figures: perf/results/tcp.md, "MSG_ZEROCOPY").
// The sender pushes TOTAL bytes in MSG-byte sends from a ring of 8 buffers, copied or with
// MSG_ZEROCOPY (reaping the kernel's completions before a buffer is reused), and prints the rate, the CPU time it
// took, and how many zerocopy sends the kernel reports having copied anyway (SO_EE_CODE_ZEROCOPY_COPIED, which it
// does whenever the receiving socket is on this machine: loopback and veth alike).
//   zerocopy_probe serve PORT
//   zerocopy_probe send HOST PORT TOTAL_MIB MSG_KIB copy|zerocopy
#include <arpa/inet.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "zerocopy_probe: %s: %s\n", what, std::strerror(errno));
  std::exit(1);
}

double cpuSeconds() {
  rusage u{};
  if (getrusage(RUSAGE_SELF, &u) != 0) die("getrusage");
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

int serve(int port) {
  int l = socket(AF_INET, SOCK_STREAM, 0);
  if (l < 0) die("socket");
  int one = 1;
  if (setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0) die("SO_REUSEADDR");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  if (bind(l, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) die("bind");
  if (listen(l, 1) != 0) die("listen");
  int c = accept(l, nullptr, nullptr);
  if (c < 0) die("accept");
  std::vector<char> buf(1 << 20);
  long long got = 0;
  for (ssize_t n; (n = read(c, buf.data(), buf.size())) != 0; got += n) {
    if (n < 0 && errno != EINTR) die("read");
    if (n < 0) n = 0;
  }
  std::printf("received %lld bytes\n", got);
  close(c);
  close(l);
  return 0;
}

// Reaps the zerocopy completions queued so far: `done` becomes the number of sends the kernel has released,
// `copied` counts those it says it copied. Waits for at least one when `block`.
void reap(int fd, bool block, long long* done, long long* copied) {
  for (;;) {
    if (block) {
      pollfd p{fd, 0, 0};  // POLLERR is always reported
      if (poll(&p, 1, 10000) < 0 && errno != EINTR) die("poll");
    }
    char control[128];
    msghdr m{};
    m.msg_control = control;
    m.msg_controllen = sizeof control;
    if (recvmsg(fd, &m, MSG_ERRQUEUE) < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        if (block) continue;
        return;
      }
      die("recvmsg(MSG_ERRQUEUE)");
    }
    for (cmsghdr* c = CMSG_FIRSTHDR(&m); c != nullptr; c = CMSG_NXTHDR(&m, c)) {
      if (!((c->cmsg_level == SOL_IP && c->cmsg_type == IP_RECVERR) ||
            (c->cmsg_level == SOL_IPV6 && c->cmsg_type == IPV6_RECVERR))) {
        continue;
      }
      sock_extended_err e;
      std::memcpy(&e, CMSG_DATA(c), sizeof e);
      if (e.ee_origin != SO_EE_ORIGIN_ZEROCOPY) continue;
      const long long n = static_cast<long long>(e.ee_data) - e.ee_info + 1;  // sends ee_info..ee_data, inclusive
      *done += n;
      if (e.ee_code & SO_EE_CODE_ZEROCOPY_COPIED) *copied += n;
    }
    block = false;
  }
}

int send(const char* host, int port, long long total, size_t msg, bool zerocopy) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) die("socket");
  int one = 1;
  if (zerocopy && setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof one) != 0) die("SO_ZEROCOPY");
  if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) die("TCP_NODELAY");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, host, &a.sin_addr) != 1) die("inet_pton");
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) die("connect");
  constexpr int kBuffers = 8;
  std::vector<std::vector<char>> ring(kBuffers, std::vector<char>(msg, 1));  // touched: no first-touch cost
  long long sent = 0, calls = 0, done = 0, copied = 0;
  const double cpu0 = cpuSeconds();
  const auto t0 = std::chrono::steady_clock::now();
  for (long long i = 0; sent < total; ++i) {
    const char* b = ring[static_cast<size_t>(i % kBuffers)].data();
    // A zerocopy buffer is the kernel's until its send completes: the one sent kBuffers ago must be released.
    while (zerocopy && calls - done >= kBuffers) reap(fd, true, &done, &copied);
    for (size_t off = 0; off < msg;) {
      ssize_t n = ::send(fd, b + off, msg - off, zerocopy ? MSG_ZEROCOPY : 0);
      if (n < 0 && errno == ENOBUFS && zerocopy) {  // the socket's optmem for pinned pages is full: reap first
        reap(fd, true, &done, &copied);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) die("send");
      off += static_cast<size_t>(n);
      ++calls;
    }
    sent += static_cast<long long>(msg);
  }
  if (shutdown(fd, SHUT_WR) != 0) die("shutdown");
  while (zerocopy && done < calls) reap(fd, true, &done, &copied);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = cpuSeconds() - cpu0;
  std::printf("%s: %lld MiB in %zu KiB sends: %.2f GB/s, sender CPU %.3f s (%.2f s per GiB)",
              zerocopy ? "zerocopy" : "copy", sent >> 20, msg >> 10, sent / secs / 1e9, cpu,
              cpu / (sent / double(1 << 30)));
  if (zerocopy) std::printf(", %lld of %lld sends copied by the kernel", copied, calls);
  std::printf("\n");
  close(fd);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "serve") return serve(std::atoi(argv[2]));
  if (argc == 7 && std::string(argv[1]) == "send") {
    return send(argv[2], std::atoi(argv[3]), std::atoll(argv[4]) << 20, static_cast<size_t>(std::atoll(argv[5])) << 10,
                std::string(argv[6]) == "zerocopy");
  }
  std::fprintf(stderr, "usage: zerocopy_probe serve PORT | send HOST PORT TOTAL_MIB MSG_KIB copy|zerocopy\n");
  return 2;
}
