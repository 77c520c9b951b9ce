// The HTTP server a process's metrics are scraped from: one thread, one poll over the listening socket, a stop
// descriptor and every client under way, so that no client ever waits for another. GET /metrics answers with the
// text that `render` makes; anything else is 404. A client gets kClientSeconds to send its request and read the
// answer, then it is dropped: a scraper that connects and sends nothing holds nobody up, and a scraper that does
// not read never blocks the thread (every socket is non-blocking).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>

namespace chorus::metrics {

class MetricsHttpServer {
 public:
  static constexpr double kClientSeconds = 2.0;
  static constexpr size_t kMaxClients = 32;         // more at once are closed at accept
  static constexpr size_t kMaxRequestBytes = 8192;  // a longer request head is dropped

  // Listens on `port` of every interface (0: a free port, see port()) and serves from a thread of its own until
  // destroyed. Throws chorus::Error naming the port and the system's error when it cannot listen.
  MetricsHttpServer(int port, std::function<std::string()> render);
  ~MetricsHttpServer();  // stops the thread and closes every socket
  MetricsHttpServer(const MetricsHttpServer&) = delete;
  MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;

  int port() const { return port_; }

 private:
  void serve();

  std::function<std::string()> render_;
  int listenFd_ = -1;
  int stopFd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace chorus::metrics
