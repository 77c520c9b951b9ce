#include "core/metrics/metrics_http_server.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "core/logging.h"
#include "core/metrics/metric_text.h"

namespace chorus::metrics {
namespace {

using Clock = std::chrono::steady_clock;

struct Client {
  int fd = -1;
  Clock::time_point deadline;
  std::string request;   // what it sent so far
  std::string response;  // empty until its request is complete
  size_t sent = 0;
};

// The answer to a request head: GET /metrics (a query string allowed) or 404.
std::string answer(const std::string& request, const std::function<std::string()>& render) {
  const size_t lineEnd = request.find_first_of("\r\n");
  const std::string line = request.substr(0, lineEnd);
  const bool metrics = line.rfind("GET /metrics ", 0) == 0 || line.rfind("GET /metrics?", 0) == 0;
  std::string body = metrics ? render() : "not found: this server answers GET /metrics\n";
  std::string head = metrics ? "HTTP/1.1 200 OK\r\nContent-Type: " + std::string(kTextContentType)
                             : std::string("HTTP/1.1 404 Not Found\r\nContent-Type: text/plain");
  head += "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n";
  return head + body;
}

bool requestComplete(const std::string& request) {
  return request.find("\r\n\r\n") != std::string::npos || request.find("\n\n") != std::string::npos;
}

}  // namespace

MetricsHttpServer::MetricsHttpServer(int port, std::function<std::string()> render) : render_(std::move(render)) {
  const std::string who = "metrics server on port " + std::to_string(port);
  if (port < 0 || port > 65535) throw Error(chorusInvalidArgument, who + ": not a TCP port (0..65535)");
  listenFd_ = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listenFd_ < 0) throwSystemError(who, "socket", errno);
  const int one = 1;
  if (setsockopt(listenFd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0) {
    const int err = errno;
    close(listenFd_);
    throwSystemError(who, "setsockopt(SO_REUSEADDR)", err);
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  socklen_t len = sizeof(addr);
  const char* failed = nullptr;
  if (bind(listenFd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    failed = "bind";
  } else if (listen(listenFd_, 64) != 0) {
    failed = "listen";
  } else if (getsockname(listenFd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    failed = "getsockname";
  } else if ((stopFd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) {
    failed = "eventfd";
  }
  if (failed != nullptr) {
    const int err = errno;
    close(listenFd_);
    throwSystemError(who, failed, err);
  }
  port_ = ntohs(addr.sin_port);
  thread_ = std::thread([this] { serve(); });
}

MetricsHttpServer::~MetricsHttpServer() {
  const uint64_t one = 1;
  ssize_t ignored = write(stopFd_, &one, sizeof(one));
  (void)ignored;
  if (thread_.joinable()) thread_.join();
  close(stopFd_);
  close(listenFd_);
}

void MetricsHttpServer::serve() {
  std::vector<Client> clients;
  std::vector<pollfd> fds;
  for (;;) {
    fds.assign({{listenFd_, POLLIN, 0}, {stopFd_, POLLIN, 0}});
    const Clock::time_point now = Clock::now();
    int timeoutMs = -1;
    for (const Client& c : clients) {
      fds.push_back({c.fd, static_cast<short>(c.response.empty() ? POLLIN : POLLOUT), 0});
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(c.deadline - now).count() + 1;
      timeoutMs = timeoutMs < 0 ? static_cast<int>(std::max<int64_t>(left, 0))
                                : std::min(timeoutMs, static_cast<int>(std::max<int64_t>(left, 0)));
    }
    if (poll(fds.data(), fds.size(), timeoutMs) < 0) {
      if (errno == EINTR) continue;
      CHORUS_WARN(-1, "metrics server on port " << port_ << ": poll: " << std::strerror(errno) << "; stopping");
      break;
    }
    if (fds[1].revents != 0) break;
    // Each client moves on as far as it can without blocking; one that is done, failed or late is closed.
    std::vector<Client> kept;
    for (size_t i = 0; i < clients.size(); ++i) {
      Client& c = clients[i];
      const short revents = fds[i + 2].revents;
      bool done = false;
      if (c.response.empty() && (revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
        char buf[2048];
        const ssize_t n = recv(c.fd, buf, sizeof(buf), 0);
        if (n > 0) {
          c.request.append(buf, static_cast<size_t>(n));
          if (requestComplete(c.request)) {
            c.response = answer(c.request, render_);
          } else if (c.request.size() > kMaxRequestBytes) {
            done = true;
          }
        } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
          done = true;
        }
      }
      if (!done && !c.response.empty()) {
        const ssize_t n = send(c.fd, c.response.data() + c.sent, c.response.size() - c.sent, MSG_NOSIGNAL);
        if (n > 0) c.sent += static_cast<size_t>(n);
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) done = true;
        if (c.sent == c.response.size()) done = true;
      }
      if (!done && Clock::now() >= c.deadline) done = true;
      if (done) {
        close(c.fd);
      } else {
        kept.push_back(std::move(c));
      }
    }
    clients = std::move(kept);
    if ((fds[0].revents & POLLIN) != 0) {
      for (;;) {
        const int fd = accept4(listenFd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) break;  // EAGAIN: none left; anything else: the next poll tries again
        if (clients.size() >= kMaxClients) {
          close(fd);
          continue;
        }
        Client c;
        c.fd = fd;
        c.deadline =
            Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(kClientSeconds));
        clients.push_back(std::move(c));
      }
    }
  }
  for (Client& c : clients) close(c.fd);
}

}  // namespace chorus::metrics
