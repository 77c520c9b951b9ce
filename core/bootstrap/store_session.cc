// The store server's sessions: HELLO and authentication, then the requests (SET, GET, ADD, CHECK, SET_OWNED,
// COMPARE_SET, CHECK_EACH), answered in order on one connection each.
#include <charconv>
#include <chrono>
#include <cstdio>
#include <new>

#include "core/bootstrap/store_session.h"
#include "core/error.h"

namespace chorus::store_server_detail {

namespace {

// Counters are kept as decimal text so that a GET of a counter key reads naturally.
bool parseCounter(const Bytes& bytes, int64_t* value) {
  const char* begin = reinterpret_cast<const char*>(bytes.data());
  const char* end = begin + bytes.size();
  auto [ptr, ec] = std::from_chars(begin, end, *value);
  return ec == std::errc() && ptr == end && !bytes.empty();
}

Bytes counterText(int64_t value) { return bytesOf(std::to_string(value)); }

}  // namespace

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
  asio::async_read(socket_, asio::buffer(headerBytes_),
                   [self](const error_code& ec, size_t) { self->onHeader(ec); });
}

void Session::onHeader(const error_code& ec) {
  if (closed_) return;
  if (ec) {
    if (ec != asio::error::eof && ec != asio::error::operation_aborted) {
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
  std::array<asio::mutable_buffer, 2> body = {asio::buffer(key_), asio::buffer(value_)};
  asio::async_read(socket_, body, [self](const error_code& bodyEc, size_t) { self->onBody(bodyEc); });
}

void Session::onBody(const error_code& ec) {
  if (closed_) return;
  if (ec) {
    if (ec != asio::error::operation_aborted) {
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
  asio::async_read(socket_, asio::buffer(handshakeIn_),
                   [self](const error_code& ec, size_t) { self->onHandshakeMessage(ec); });
}

void Session::onHandshakeMessage(const error_code& ec) {
  if (closed_) return;
  if (ec) {
    if (ec == asio::error::operation_aborted) return close();
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
    return respond(wire::Status::kNotCounter, bytesOf("key '" + key_ + "' holds a value that is not a counter"));
  }
  int64_t sum = 0;
  if (__builtin_add_overflow(current, delta, &sum)) {
    return respond(wire::Status::kNotCounter, bytesOf("counter '" + key_ + "' would overflow"));
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
  respond(status, bytesOf(reason));
}

void Session::dropConnection(const std::string& why) {
  CHORUS_WARN(-1, "store server at " << service_.address() << ": closing the connection from " << peer_ << ": " << why);
  close();
}

void Session::writeNext() {
  auto self = shared_from_this();
  asio::async_write(socket_, asio::buffer(writeQueue_.front()), [self](const error_code& ec, size_t) {
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

}  // namespace chorus::store_server_detail
