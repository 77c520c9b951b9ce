// The metrics server: GET /metrics answers with the rendered text, anything else is 404, and a client that
// connects and sends nothing does not hold up the next scrape.
#include "core/metrics/metrics_http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "core/metrics/metric_text.h"
#include "core/metrics/process_metrics.h"

namespace chorus::metrics {
namespace {

int connectTo(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  EXPECT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0) << strerror(errno);
  return fd;
}

// Sends `request` and reads the answer until the server closes, within `seconds`.
std::string exchange(int port, const std::string& request, double seconds = 5) {
  const int fd = connectTo(port);
  EXPECT_EQ(send(fd, request.data(), request.size(), MSG_NOSIGNAL), static_cast<ssize_t>(request.size()));
  std::string answer;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) <= 0) {
      ADD_FAILURE() << "no answer within " << seconds << " s";
      break;
    }
    char buf[4096];
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    answer.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return answer;
}

TEST(MetricsHttpServerTest, AnswersGetMetricsWithTheTextFormat) {
  MetricsHttpServer server(0, [] { return std::string("x_total 1\n"); });
  ASSERT_GT(server.port(), 0);
  const std::string answer = exchange(server.port(), "GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n");
  EXPECT_EQ(answer.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << answer;
  EXPECT_NE(answer.find("Content-Type: text/plain; version=0.0.4"), std::string::npos) << answer;
  EXPECT_NE(answer.find("Content-Length: 10\r\n"), std::string::npos) << answer;
  EXPECT_EQ(answer.substr(answer.size() - 10), "x_total 1\n");
}

TEST(MetricsHttpServerTest, AnswersAnythingElseWith404) {
  MetricsHttpServer server(0, [] { return std::string("x_total 1\n"); });
  for (const char* request :
       {"GET / HTTP/1.1\r\n\r\n", "GET /metricsX HTTP/1.1\r\n\r\n", "POST /metrics HTTP/1.1\r\n\r\n", "nonsense\n\n"}) {
    const std::string answer = exchange(server.port(), request);
    EXPECT_EQ(answer.rfind("HTTP/1.1 404 Not Found\r\n", 0), 0u) << request << " -> " << answer;
  }
}

TEST(MetricsHttpServerTest, ASilentClientDoesNotHoldUpTheNextScrape) {
  MetricsHttpServer server(0, [] { return std::string("x_total 1\n"); });
  const int silent = connectTo(server.port());  // connects and sends nothing
  const auto began = std::chrono::steady_clock::now();
  const std::string answer = exchange(server.port(), "GET /metrics HTTP/1.0\r\n\r\n");
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  EXPECT_EQ(answer.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << answer;
  // Well under the silent client's own deadline: it was served beside it, not after it.
  EXPECT_LT(took, MetricsHttpServer::kClientSeconds / 2);
  // The silent client is dropped at its deadline: the server closes it (recv sees the end).
  pollfd p{silent, POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, static_cast<int>(MetricsHttpServer::kClientSeconds * 1000 + 3000)), 1);
  char c;
  EXPECT_EQ(recv(silent, &c, 1, 0), 0);
  close(silent);
}

TEST(MetricsHttpServerTest, RefusesAPortInUseWithTheSystemsError) {
  MetricsHttpServer first(0, [] { return std::string(); });
  try {
    MetricsHttpServer second(first.port(), [] { return std::string(); });
    FAIL() << "a second server listened on port " << first.port();
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("bind"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(std::to_string(first.port())), std::string::npos) << e.what();
  }
}

class FixedSource : public MetricSource {
 public:
  explicit FixedSource(double v) : v_(v) {}
  void collect(MetricText& out) const override { out.counter("fixed_total", "Fixed.", {{"v", "x"}}, v_); }

 private:
  double v_;
};

TEST(ProcessMetricsTest, ServesWhileASourceIsAddedAndStopsWithTheLast) {
  ProcessMetrics& metrics = ProcessMetrics::instance();
  ASSERT_EQ(metrics.servingPort(), 0);
  FixedSource a(1), b(2);
  // Port 0: any free port (the tests do not collide with a real job's).
  metrics.add(&a, 0, 0);
  metrics.add(&b, 0, 1);
  const int port = metrics.servingPort();
  ASSERT_GT(port, 0);
  const std::string answer = exchange(port, "GET /metrics HTTP/1.1\r\n\r\n");
  EXPECT_NE(answer.find("# TYPE fixed_total counter\nfixed_total{v=\"x\"} 1\nfixed_total{v=\"x\"} 2\n"),
            std::string::npos)
      << answer;
  metrics.remove(&a);
  EXPECT_EQ(metrics.servingPort(), port);
  metrics.remove(&b);
  EXPECT_EQ(metrics.servingPort(), 0);
}

}  // namespace
}  // namespace chorus::metrics
