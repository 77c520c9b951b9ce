// StoreServer: one Asio thread, one Session per connection, a key/value map and the GETs parked on missing keys.
//
// Every frame is length-checked (store_protocol.h) before anything is allocated; before its HELLO is accepted a
// connection may send only small frames. A malformed frame closes only its own connection, with a WARN; a refused
// HELLO gets an error response first so that the client can say why. With a secret, HELLO is followed by the
// channel handshake (core/security/channel_handshake.h) driven here with Asio reads of its fixed-size messages.
// A stranger cannot hold the server: a connection gets StoreServer::kHelloSeconds to complete HELLO and the
// handshake, and accepting pauses while kMaxPendingConnections connections are still that far.
#include <fcntl.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "core/bootstrap/store.h"
#include "core/bootstrap/store_session.h"
#include "core/error.h"
#include "core/logging.h"
#include "core/params.h"

namespace chorus {
namespace store_server_detail {
namespace {

std::string endpointText(const tcp::endpoint& endpoint) {
  std::string host = endpoint.address().to_string();
  if (endpoint.address().is_v6()) host = "[" + host + "]";
  return host + ":" + std::to_string(endpoint.port());
}

// Asio does not open sockets with SOCK_CLOEXEC; chorusrun forks ranks, which must not inherit the store's sockets.
void setCloseOnExec(int fd, const std::string& what) {
  int flags = fcntl(fd, F_GETFD);
  if (flags < 0 || fcntl(fd, F_SETFD, flags | FD_CLOEXEC) < 0) {
    CHORUS_WARN(-1, "store server: fcntl(FD_CLOEXEC) on " << what << " failed: " << std::strerror(errno));
  }
}

}  // namespace

StoreService::StoreService(const std::string& bindHost, uint16_t port, std::string jobId, std::string secret,
                           double helloSeconds)
    : jobId_(std::move(jobId)), secret_(std::move(secret)), helloSeconds_(helloSeconds) {
  bind(bindHost, port);
  acceptNext();
  thread_ = std::thread([this] { serve(); });
  CHORUS_INFO(-1, "store server listening on " << address_
                                              << (secret_.empty() ? " (no secret: clients are not authenticated)"
                                                                  : " (clients are authenticated)"));
}

StoreService::~StoreService() {
  asio::post(ioc_, [this] { stopOnServerThread(); });
  thread_.join();
}

void StoreService::bind(const std::string& bindHost, uint16_t port) {
  std::string host = bindHost;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  std::string wanted = host + ":" + std::to_string(port);
  error_code ec;
  tcp::resolver resolver(ioc_);
  auto results =
      resolver.resolve(host, std::to_string(port), tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec) throw Error(chorusSystemError, "store server: cannot resolve bind address " + wanted + ": " + ec.message());
  std::string lastError = "no address";
  for (const auto& entry : results) {
    tcp::endpoint endpoint = entry.endpoint();
    std::string what = endpointText(endpoint);
    acceptor_.open(endpoint.protocol(), ec);
    if (ec) {
      lastError = "socket for " + what + ": " + ec.message();
      continue;
    }
    acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      lastError = "bind/listen on " + what + ": " + ec.message();
      error_code ignored;
      acceptor_.close(ignored);
      continue;
    }
    break;
  }
  if (!acceptor_.is_open())
    throw Error(chorusSystemError, "store server: cannot listen on " + wanted + ": " + lastError);
  setCloseOnExec(acceptor_.native_handle(), "the listening socket");
  tcp::endpoint local = acceptor_.local_endpoint(ec);
  if (ec) throw Error(chorusSystemError, "store server: getsockname on " + wanted + " failed: " + ec.message());
  port_ = local.port();
  address_ = endpointText(local);
}

void StoreService::acceptNext() {
  acceptor_.async_accept([this](const error_code& ec, tcp::socket socket) {
    if (stopping_ || ec == asio::error::operation_aborted) return;
    if (ec == asio::error::connection_aborted) return acceptNext();
    if (ec) {
      // E.g. EMFILE: retry later instead of spinning on an accept that fails at once.
      CHORUS_WARN(-1, "store server at " << address_ << ": accept failed: " << ec.message() << "; retrying");
      acceptRetry_.expires_after(std::chrono::milliseconds(100));
      acceptRetry_.async_wait([this](const error_code& timerEc) {
        if (!timerEc && !stopping_) acceptNext();
      });
      return;
    }
    error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    setCloseOnExec(socket.native_handle(), "an accepted socket");
    std::string peer = endpointText(socket.remote_endpoint(ignored));
    auto session = std::make_shared<Session>(*this, std::move(socket), peer);
    sessions_.emplace(session.get(), session);
    ++pending_;
    CHORUS_TRACE(-1, "store server at " << address_ << ": connection from " << peer);
    session->start();
    if (pending_ < StoreServer::kMaxPendingConnections) return acceptNext();
    // Strangers that connect and say nothing must not exhaust descriptors: the rest wait in the backlog until
    // these complete HELLO or time out.
    acceptPaused_ = true;
    CHORUS_WARN(-1, "store server at " << address_ << ": " << pending_
                                       << " connections have not completed HELLO; accepting paused");
  });
}

void StoreService::serve() {
  // Handlers do not throw by design; should one do so anyway (e.g. bad_alloc), keep serving the others.
  for (;;) {
    try {
      ioc_.run();
      return;
    } catch (const std::exception& e) {
      CHORUS_WARN(-1, "store server at " << address_ << ": handler failed: " << e.what());
    }
  }
}

void StoreService::stopOnServerThread() {
  stopping_ = true;
  error_code ignored;
  acceptor_.close(ignored);
  acceptRetry_.cancel();
  auto sessions = sessions_;  // close() erases from sessions_
  for (auto& [raw, session] : sessions) session->close();
  sessions_.clear();
  waiters_.clear();
  owners_.clear();
}

void StoreService::pendingDone() {
  --pending_;
  if (acceptPaused_ && !stopping_ && pending_ < StoreServer::kMaxPendingConnections) {
    acceptPaused_ = false;
    CHORUS_INFO(-1, "store server at " << address_ << ": accepting connections again");
    acceptNext();
  }
}

}  // namespace store_server_detail

struct StoreServer::Impl {
  Impl(const std::string& bindHost, uint16_t port, const std::string& jobId, const std::string& secret,
       double helloSeconds)
      : service(bindHost, port, jobId, secret, helloSeconds) {}
  store_server_detail::StoreService service;
};

StoreServer::StoreServer(const std::string& bindHost, uint16_t port, const std::string& jobId)
    : StoreServer(bindHost, port, jobId, params::secret()) {}

StoreServer::StoreServer(const std::string& bindHost, uint16_t port, const std::string& jobId,
                         const std::string& secret)
    : StoreServer(bindHost, port, jobId, secret, kHelloSeconds) {}

StoreServer::StoreServer(const std::string& bindHost, uint16_t port, const std::string& jobId,
                         const std::string& secret, double helloSeconds)
    : impl_(std::make_unique<Impl>(bindHost, port, jobId, secret, helloSeconds)) {}

StoreServer::~StoreServer() = default;

uint16_t StoreServer::port() const { return impl_->service.port(); }

}  // namespace chorus
