// A stranger's view of a Chorus port: a plain blocking TCP connection, and whether the other side hung up.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cerrno>
#include <cstdint>
#include <string>

namespace chorus::test {

// A blocking connection to host:port (dotted IPv4) whose receives time out after 10 s; failures are test failures.
inline int connectTo(const std::string& host, uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  EXPECT_GE(fd, 0);
  timeval timeout{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  EXPECT_EQ(::inet_pton(AF_INET, host.c_str(), &addr.sin_addr), 1) << host;
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0) << host << ":" << port;
  return fd;
}

// True when the peer closed fd (EOF or reset) within the receive timeout; data is skipped.
inline bool closedByPeer(int fd) {
  char buffer[256];
  for (;;) {
    ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n == 0) return true;
    if (n < 0) return errno == ECONNRESET;
  }
}

}  // namespace chorus::test
