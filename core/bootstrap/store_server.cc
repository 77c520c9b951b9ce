// StoreServer: one Asio thread, one Session per connection, a key/value map and the GETs parked on missing keys.
//
// Every frame is length-checked (store_protocol.h) before anything is allocated; before its HELLO is accepted a
// connection may send only small frames. A malformed frame closes only its own connection, with a WARN; a refused
// HELLO gets an error response first so that the client can say why. With a secret, HELLO is followed by the
// channel handshake (core/security/channel_handshake.h) driven here with Asio reads of its fixed-size messages.
// A stranger cannot hold the server: a connection gets StoreServer::kHelloSeconds to complete HELLO and the
// handshake, and accepting pauses while kMaxPendingConnections connections are still that far.
#include <fcntl.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <new>
#include <thread>
#include <unordered_map>
#include <utility>

// After <utility>: Boost 1.74's asio/awaitable.hpp uses std::exchange without including it under C++20.
#include <boost/asio.hpp>

#include "core/bootstrap/store.h"
#include "core/bootstrap/store_protocol.h"
#include "core/error.h"
#include "core/logging.h"
#include "core/params.h"
#include "core/security/channel_handshake.h"

namespace chorus {

// Named rather than anonymous: the Impl below holds these types, and unity builds would warn (subobject-linkage).
namespace store_server_detail {

using boost::asio::ip::tcp;
using boost::system::error_code;
namespace wire = store_protocol;

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

// Counters are kept as decimal text so that a GET of a counter key reads naturally.
bool parseCounter(const Bytes& bytes, int64_t* value) {
  const char* begin = reinterpret_cast<const char*>(bytes.data());
  const char* end = begin + bytes.size();
  auto [ptr, ec] = std::from_chars(begin, end, *value);
  return ec == std::errc() && ptr == end && !bytes.empty();
}

Bytes counterText(int64_t value) {
  std::string text = std::to_string(value);
  return Bytes(text.begin(), text.end());
}

Bytes textBytes(const std::string& text) { return Bytes(text.begin(), text.end()); }

class StoreService;

// One client connection: reads one request at a time, answers in order, parks at most one GET.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(StoreService& service, tcp::socket socket, std::string peer)
      : service_(service), socket_(std::move(socket)), peer_(std::move(peer)), helloTimer_(socket_.get_executor()) {}

  // Starts reading requests; the first must be HELLO, completed (with authentication) within kHelloSeconds.
  void start();
  // Closes the socket and drops this session from the service; idempotent.
  void close();
  // Answers the GET this session parked.
  void answerParkedGet(const Bytes& value);

 private:
  void readHeader();
  void onHeader(const error_code& ec);
  void onBody(const error_code& ec);
  void dispatch();
  void onHello();
  void beginAuthentication();
  void readHandshakeMessage();
  void onHandshakeMessage(const error_code& ec);
  void completeHello(uint8_t answer);
  void leavePending();
  void onSet();
  void onGet();
  void onAdd();
  void onCheck();
  void onSetOwned();
  void onCompareSet();
  void onCheckEach();
  void respond(wire::Status status, std::span<const uint8_t> value);
  void sendRaw(Bytes bytes);
  void refuse(wire::Status status, const std::string& reason);
  void dropConnection(const std::string& why);
  void writeNext();

  StoreService& service_;
  tcp::socket socket_;
  const std::string peer_;
  std::array<uint8_t, wire::kHeaderBytes> headerBytes_{};
  wire::FrameHeader header_;
  std::string key_;
  Bytes value_;
  bool helloDone_ = false;
  bool pending_ = true;  // counted by the service among the connections that have not completed HELLO
  boost::asio::steady_timer helloTimer_;
  std::unique_ptr<ChannelHandshake> handshake_;  // while authenticating
  Bytes handshakeIn_;
  bool parked_ = false;  // a GET waits for parkedKey_; any further request is a protocol violation
  std::string parkedKey_;
  bool closeAfterWrites_ = false;  // a refusal is being sent; no more requests are read
  bool closed_ = false;
  std::deque<Bytes> writeQueue_;
};

// The store's state and network endpoint. After construction, everything runs on the server thread.
class StoreService {
 public:
  StoreService(const std::string& bindHost, uint16_t port, std::string jobId, std::string secret, double helloSeconds)
      : jobId_(std::move(jobId)), secret_(std::move(secret)), helloSeconds_(helloSeconds) {
    bind(bindHost, port);
    acceptNext();
    thread_ = std::thread([this] { serve(); });
    CHORUS_INFO(-1, "store server listening on " << address_
                                                << (secret_.empty() ? " (no secret: clients are not authenticated)"
                                                                    : " (clients are authenticated)"));
  }

  // Closes the acceptor and every connection (parked GETs included) on the server thread, then joins it.
  ~StoreService() {
    boost::asio::post(ioc_, [this] { stopOnServerThread(); });
    thread_.join();
  }

  uint16_t port() const { return port_; }
  const std::string& address() const { return address_; }
  const std::string& jobId() const { return jobId_; }
  const std::string& secret() const { return secret_; }
  double helloSeconds() const { return helloSeconds_; }

  const Bytes* find(const std::string& key) const {
    auto it = values_.find(key);
    return it == values_.end() ? nullptr : &it->second;
  }

  // Stores the value and answers every GET parked on the key; `owner` (SET_OWNED) takes it away when it closes.
  void set(const std::string& key, Bytes value, const Session* owner = nullptr) {
    if (owner) {
      owners_[key] = owner;
    } else {
      owners_.erase(key);
    }
    Bytes& stored = values_[key];
    stored = std::move(value);
    auto it = waiters_.find(key);
    if (it == waiters_.end()) return;
    std::vector<std::weak_ptr<Session>> waiting = std::move(it->second);
    waiters_.erase(it);
    for (const auto& weak : waiting) {
      if (auto session = weak.lock()) session->answerParkedGet(stored);
    }
  }

  void park(const std::string& key, std::weak_ptr<Session> session) { waiters_[key].push_back(std::move(session)); }

  void unpark(const std::string& key, const Session* session) {
    auto it = waiters_.find(key);
    if (it == waiters_.end()) return;
    std::erase_if(it->second, [session](const std::weak_ptr<Session>& weak) {
      auto locked = weak.lock();
      return !locked || locked.get() == session;
    });
    if (it->second.empty()) waiters_.erase(it);
  }

  // A closed session: its owned keys go with it.
  void forget(const Session* session) {
    sessions_.erase(session);
    std::erase_if(owners_, [&](const auto& entry) {
      if (entry.second != session) return false;
      values_.erase(entry.first);
      return true;
    });
  }

  // A connection finished (or abandoned) its HELLO: one more may be accepted if accepting was paused.
  void pendingDone() {
    --pending_;
    if (acceptPaused_ && !stopping_ && pending_ < StoreServer::kMaxPendingConnections) {
      acceptPaused_ = false;
      CHORUS_INFO(-1, "store server at " << address_ << ": accepting connections again");
      acceptNext();
    }
  }

 private:
  void bind(const std::string& bindHost, uint16_t port) {
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
      if (!ec) acceptor_.listen(boost::asio::socket_base::max_listen_connections, ec);
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

  void acceptNext() {
    acceptor_.async_accept([this](const error_code& ec, tcp::socket socket) {
      if (stopping_ || ec == boost::asio::error::operation_aborted) return;
      if (ec == boost::asio::error::connection_aborted) return acceptNext();
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

  void serve() {
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

  void stopOnServerThread() {
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

  boost::asio::io_context ioc_;
  tcp::acceptor acceptor_{ioc_};
  boost::asio::steady_timer acceptRetry_{ioc_};
  const std::string jobId_;
  const std::string secret_;
  const double helloSeconds_;
  int pending_ = 0;  // sessions that have not completed HELLO
  bool acceptPaused_ = false;
  std::string address_;
  uint16_t port_ = 0;
  bool stopping_ = false;
  std::unordered_map<std::string, Bytes> values_;
  std::unordered_map<std::string, std::vector<std::weak_ptr<Session>>> waiters_;
  std::unordered_map<std::string, const Session*> owners_;  // SET_OWNED keys and the session that set them
  std::unordered_map<const Session*, std::shared_ptr<Session>> sessions_;
  std::thread thread_;
};

void Session::start() {
  auto self = shared_from_this();
  helloTimer_.expires_after(std::chrono::milliseconds(static_cast<int64_t>(service_.helloSeconds() * 1000)));
  helloTimer_.async_wait([self](const error_code& ec) {
    if (ec || self->closed_ || self->helloDone_) return;
    char limit[32];
    std::snprintf(limit, sizeof(limit), "%.1fs", self->service_.helloSeconds());
    self->dropConnection(std::string("no HELLO") + (self->handshake_ ? " authentication" : "") + " completed within " +
                         limit);
  });
  readHeader();
}

void Session::leavePending() {
  if (!pending_) return;
  pending_ = false;
  service_.pendingDone();
}

void Session::close() {
  if (closed_) return;
  closed_ = true;
  helloTimer_.cancel();
  leavePending();
  error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
  if (parked_) service_.unpark(parkedKey_, this);
  parked_ = false;
  service_.forget(this);
}

void Session::answerParkedGet(const Bytes& value) {
  if (closed_ || !parked_) return;
  parked_ = false;
  parkedKey_.clear();
  respond(wire::Status::kOk, value);
}

void Session::readHeader() {
  auto self = shared_from_this();
  boost::asio::async_read(socket_, boost::asio::buffer(headerBytes_),
                          [self](const error_code& ec, size_t) { self->onHeader(ec); });
}

void Session::onHeader(const error_code& ec) {
  if (closed_) return;
  if (ec) {
    if (ec != boost::asio::error::eof && ec != boost::asio::error::operation_aborted) {
      CHORUS_INFO(-1, "store server at " << service_.address() << ": reading from " << peer_ << ": " << ec.message());
    }
    return close();
  }
  header_ = wire::decodeHeader(headerBytes_.data());
  std::string problem = wire::headerProblem(header_);
  if (problem.empty() && header_.status != wire::Status::kOk) problem = "a request carries a non-zero status";
  if (!problem.empty()) return dropConnection("malformed header: " + problem);
  if (parked_) return dropConnection("sent " + wire::opName(header_.op) + " while its GET is still waiting");
  if (!helloDone_ && header_.valueBytes > wire::kMaxHelloValueBytes) {
    return dropConnection("sent a " + std::to_string(header_.valueBytes) + "-byte " + wire::opName(header_.op) +
                          " before its HELLO was accepted");
  }
  try {
    key_.assign(header_.keyBytes, '\0');
    value_.assign(header_.valueBytes, 0);
  } catch (const std::bad_alloc&) {
    return dropConnection("no memory for a " + std::to_string(header_.valueBytes) + "-byte value");
  }
  auto self = shared_from_this();
  std::array<boost::asio::mutable_buffer, 2> body = {boost::asio::buffer(key_), boost::asio::buffer(value_)};
  boost::asio::async_read(socket_, body, [self](const error_code& bodyEc, size_t) { self->onBody(bodyEc); });
}

void Session::onBody(const error_code& ec) {
  if (closed_) return;
  if (ec) {
    if (ec != boost::asio::error::operation_aborted) {
      CHORUS_WARN(-1, "store server at " << service_.address() << ": " << peer_ << " sent a truncated "
                                         << wire::opName(header_.op) << ": " << ec.message());
    }
    return close();
  }
  dispatch();
  // While a GET is parked the next read only watches for the client going away (or misbehaving).
  if (!closed_ && !closeAfterWrites_ && !handshake_) readHeader();
}

void Session::dispatch() {
  if (!helloDone_ && header_.op != wire::Op::kHello) {
    CHORUS_WARN(-1, "store server at " << service_.address() << ": " << peer_ << " sent " << wire::opName(header_.op)
                                       << " before HELLO; closing");
    return refuse(wire::Status::kBadRequest, "the first request must be HELLO");
  }
  switch (header_.op) {
    case wire::Op::kHello:
      return onHello();
    case wire::Op::kSet:
      return onSet();
    case wire::Op::kGet:
      return onGet();
    case wire::Op::kAdd:
      return onAdd();
    case wire::Op::kCheck:
      return onCheck();
    case wire::Op::kSetOwned:
      return onSetOwned();
    case wire::Op::kCompareSet:
      return onCompareSet();
    case wire::Op::kCheckEach:
      return onCheckEach();
  }
  dropConnection("unknown op");  // headerProblem already refused unknown ops
}

void Session::onHello() {
  if (helloDone_) return dropConnection("sent a second HELLO");
  uint32_t version = 0;
  if (!wire::decodeUint32(value_, &version)) return dropConnection("HELLO without a 4-byte protocol version");
  if (version != wire::kVersion) {
    CHORUS_WARN(-1, "store server at " << service_.address() << ": " << peer_ << " speaks protocol version " << version
                                       << ", not " << wire::kVersion << "; refusing");
    return refuse(wire::Status::kBadVersion, "store protocol version " + std::to_string(version) +
                                                 " is not supported (server speaks " + std::to_string(wire::kVersion) +
                                                 ")");
  }
  if (key_ != service_.jobId()) {
    CHORUS_WARN(-1, "store server at " << service_.address() << ": " << peer_ << " presented job id '" << key_
                                       << "', which is not this store's job; refusing");
    return refuse(wire::Status::kJobMismatch, "this store belongs to another job");
  }
  beginAuthentication();
}

// Without a secret every peer that knows the job id is admitted. With one, the HELLO answer announces the
// handshake, whose messages then follow on the raw stream; requests are read again only once it succeeded.
void Session::beginAuthentication() {
  if (service_.secret().empty()) return completeHello(wire::kHelloServed);
  const uint8_t announce = wire::kHelloAuthenticate;
  respond(wire::Status::kOk, std::span<const uint8_t>(&announce, 1));
  handshake_ = std::make_unique<ChannelHandshake>(service_.secret(), wire::helloAuthContext(service_.jobId()),
                                                  ChannelRole::kAcceptor);
  sendRaw(handshake_->start());
  readHandshakeMessage();
}

void Session::readHandshakeMessage() {
  handshakeIn_.assign(handshake_->bytesWanted(), 0);
  auto self = shared_from_this();
  boost::asio::async_read(socket_, boost::asio::buffer(handshakeIn_),
                          [self](const error_code& ec, size_t) { self->onHandshakeMessage(ec); });
}

void Session::onHandshakeMessage(const error_code& ec) {
  if (closed_) return;
  if (ec) {
    if (ec == boost::asio::error::operation_aborted) return close();
    handshake_->fail(AuthFailure::kClosed, "the connection ended while the server waited for " +
                                               std::string(handshake_->waitingFor()) + " (" + ec.message() +
                                               "; a client without the secret?)");
  }
  Bytes reply;
  if (!ec) handshake_->feed(handshakeIn_, &reply);
  if (handshake_->failed()) {
    // Logged before the refusal goes out, so that whoever sees the refusal can also find the log line.
    CHORUS_WARN(-1, "store server at " << service_.address() << ": refused " << peer_ << ": authentication failed ("
                                       << authFailureName(handshake_->failure()) << "): " << handshake_->problem());
    closeAfterWrites_ = true;  // the refusal verdict, if any, goes out first
    if (!reply.empty()) return sendRaw(std::move(reply));
    if (writeQueue_.empty()) close();
    return;
  }
  if (!reply.empty()) sendRaw(std::move(reply));
  if (!handshake_->succeeded()) return readHandshakeMessage();
  handshake_.reset();
  CHORUS_TRACE(-1, "store server at " << service_.address() << ": " << peer_ << " authenticated");
  helloDone_ = true;
  helloTimer_.cancel();
  leavePending();
  readHeader();
}

void Session::completeHello(uint8_t answer) {
  helloDone_ = true;
  helloTimer_.cancel();
  leavePending();
  respond(wire::Status::kOk, std::span<const uint8_t>(&answer, 1));
}

void Session::onSet() {
  service_.set(key_, std::move(value_));
  respond(wire::Status::kOk, {});
}

void Session::onGet() {
  if (const Bytes* value = service_.find(key_)) return respond(wire::Status::kOk, *value);
  parked_ = true;
  parkedKey_ = key_;
  service_.park(key_, weak_from_this());
}

void Session::onAdd() {
  int64_t delta = 0;
  if (!wire::decodeInt64(value_, &delta)) return dropConnection("ADD without an 8-byte delta");
  int64_t current = 0;
  if (const Bytes* existing = service_.find(key_); existing && !parseCounter(*existing, &current)) {
    return respond(wire::Status::kNotCounter, textBytes("key '" + key_ + "' holds a value that is not a counter"));
  }
  int64_t sum = 0;
  if (__builtin_add_overflow(current, delta, &sum)) {
    return respond(wire::Status::kNotCounter, textBytes("counter '" + key_ + "' would overflow"));
  }
  service_.set(key_, counterText(sum));
  respond(wire::Status::kOk, wire::encodeInt64(sum));
}

void Session::onCheck() {
  std::vector<std::string> keys;
  std::string problem;
  if (!wire::decodeKeyList(value_, &keys, &problem)) return dropConnection("malformed CHECK: " + problem);
  bool all = true;
  for (const std::string& key : keys) all = all && service_.find(key) != nullptr;
  const uint8_t answer = all ? 1 : 0;
  respond(wire::Status::kOk, std::span<const uint8_t>(&answer, 1));
}

void Session::onSetOwned() {
  service_.set(key_, std::move(value_), this);
  respond(wire::Status::kOk, {});
}

void Session::onCompareSet() {
  Bytes expected, desired;
  if (!wire::decodeCompareSet(value_, &expected, &desired)) return dropConnection("malformed COMPARE_SET value");
  const Bytes* current = service_.find(key_);
  if ((!current && expected.empty()) || (current && *current == expected)) {
    service_.set(key_, std::move(desired));
    current = service_.find(key_);
  }
  respond(wire::Status::kOk, current ? std::span<const uint8_t>(*current) : std::span<const uint8_t>());
}

void Session::onCheckEach() {
  std::vector<std::string> keys;
  std::string problem;
  if (!wire::decodeKeyList(value_, &keys, &problem)) return dropConnection("malformed CHECK_EACH: " + problem);
  Bytes answer(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) answer[i] = service_.find(keys[i]) != nullptr ? 1 : 0;
  respond(wire::Status::kOk, answer);
}

void Session::respond(wire::Status status, std::span<const uint8_t> value) {
  writeQueue_.push_back(wire::encodeFrame(header_.op, status, {}, value));
  if (writeQueue_.size() == 1) writeNext();
}

void Session::sendRaw(Bytes bytes) {
  writeQueue_.push_back(std::move(bytes));
  if (writeQueue_.size() == 1) writeNext();
}

void Session::refuse(wire::Status status, const std::string& reason) {
  closeAfterWrites_ = true;
  respond(status, textBytes(reason));
}

void Session::dropConnection(const std::string& why) {
  CHORUS_WARN(-1, "store server at " << service_.address() << ": closing the connection from " << peer_ << ": " << why);
  close();
}

void Session::writeNext() {
  auto self = shared_from_this();
  boost::asio::async_write(socket_, boost::asio::buffer(writeQueue_.front()), [self](const error_code& ec, size_t) {
    if (self->closed_) return;
    if (ec) {
      CHORUS_INFO(
          -1, "store server at " << self->service_.address() << ": writing to " << self->peer_ << ": " << ec.message());
      return self->close();
    }
    self->writeQueue_.pop_front();
    if (!self->writeQueue_.empty()) {
      self->writeNext();
    } else if (self->closeAfterWrites_) {
      self->close();
    }
  });
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
