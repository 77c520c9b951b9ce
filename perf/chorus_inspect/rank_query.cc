#include "perf/chorus_inspect/rank_query.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <sstream>

#include "core/error.h"
#include "core/host_port.h"
#include "src/flight/comm_flight.h"
#include "src/flight/flight_service.h"

namespace chorus::inspect {
namespace {

// One process being asked: connecting, sending the request, reading the answer until the peer closes.
struct Query {
  std::string address;
  int fd = -1;
  std::string request;
  size_t sent = 0;
  bool connected = false, finished = false;
  Answer answer;
};

void finish(Query& q, bool ok, const std::string& problem) {
  q.finished = true;
  q.answer.ok = ok;
  q.answer.problem = problem;
  if (q.fd >= 0) close(q.fd);
  q.fd = -1;
}

void start(Query& q) {
  std::string host;
  uint16_t port = 0;
  try {
    splitHostPort(q.address, "inspect card", &host, &port);
  } catch (const Error& e) {
    finish(q, false, e.what());
    return;
  }
  // A numeric address (IPv4, or IPv6 with its zone when link-local), as the card names it: nothing to look up.
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  addrinfo* to = nullptr;
  const int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &to);
  if (rc != 0 || to == nullptr) {
    finish(q, false, "not a numeric address: " + host + " (" + gai_strerror(rc) + ")");
    return;
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owner(to, &freeaddrinfo);
  q.fd = socket(to->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (q.fd < 0) {
    finish(q, false, std::string("socket: ") + std::strerror(errno));
    return;
  }
  if (connect(q.fd, to->ai_addr, to->ai_addrlen) != 0 && errno != EINPROGRESS) {
    finish(q, false, std::string("connect: ") + std::strerror(errno));
  }
}

void step(Query& q, short revents) {
  if (!q.connected) {
    int err = 0;
    socklen_t length = sizeof(err);
    getsockopt(q.fd, SOL_SOCKET, SO_ERROR, &err, &length);
    if (err != 0) return finish(q, false, std::string("connect: ") + std::strerror(err));
    if (!(revents & POLLOUT)) return;
    q.connected = true;
  }
  if (q.sent < q.request.size()) {
    const ssize_t w = send(q.fd, q.request.data() + q.sent, q.request.size() - q.sent, MSG_NOSIGNAL);
    if (w < 0 && errno != EAGAIN && errno != EINTR)
      return finish(q, false, std::string("send: ") + std::strerror(errno));
    if (w > 0) q.sent += static_cast<size_t>(w);
    return;
  }
  char buf[65536];
  for (;;) {
    const ssize_t r = recv(q.fd, buf, sizeof(buf), 0);
    if (r > 0) {
      q.answer.text.append(buf, static_cast<size_t>(r));
      continue;
    }
    if (r == 0) return finish(q, !q.answer.text.empty(), q.answer.text.empty() ? "closed without an answer" : "");
    if (errno == EAGAIN || errno == EINTR) return;
    return finish(q, false, std::string("recv: ") + std::strerror(errno));
  }
}

}  // namespace

std::vector<Card> readCards(StoreClient& store, Deadline deadline) {
  std::vector<Card> cards;
  const int64_t count = store.add(kInspectCardCount, 0, deadline);
  for (int64_t i = 1; i <= count; ++i) {
    std::istringstream card(textOf(store.get(inspectCardKey(i), deadline)));
    Card c;
    if (card >> c.address >> c.rank >> c.size >> c.identity >> c.token) cards.push_back(c);
  }
  return cards;
}

std::map<std::string, Answer> askAll(const std::map<std::string, std::string>& listeners, size_t newest,
                                     double timeoutSeconds) {
  std::vector<Query> queries(listeners.size());
  size_t i = 0;
  for (const auto& [address, token] : listeners) {
    queries[i].address = address;
    queries[i].request = flight_service::requestLine(token, newest);
    start(queries[i++]);
  }
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeoutSeconds);
  for (;;) {
    std::vector<pollfd> fds;
    std::vector<Query*> owners;
    for (Query& q : queries) {
      if (q.finished) continue;
      fds.push_back({q.fd, static_cast<short>(q.connected && q.sent == q.request.size() ? POLLIN : POLLOUT), 0});
      owners.push_back(&q);
    }
    if (fds.empty()) break;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    const int r = poll(fds.data(), fds.size(), static_cast<int>(left.count()));
    if (r < 0 && errno != EINTR) break;
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents != 0) step(*owners[i], fds[i].revents);
    }
  }
  std::map<std::string, Answer> answers;
  char waited[64];
  std::snprintf(waited, sizeof(waited), "no answer within %.1f s", timeoutSeconds);
  for (Query& q : queries) {
    if (!q.finished) finish(q, false, waited);
    answers[q.address] = q.answer;
  }
  return answers;
}

}  // namespace chorus::inspect
