// StoreClient: one non-blocking TCP socket driven with poll(), so that every wait ends by its Deadline.
//
// After a timeout or a lost connection the stream may hold half a frame, so the client closes the socket and
// refuses further calls rather than guess where the next frame begins.
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iomanip>
#include <sstream>

#include "core/bootstrap/store.h"
#include "core/bootstrap/store_protocol.h"
#include "core/deadline_wait.h"
#include "core/error.h"
#include "core/logging.h"
#include "core/params.h"
#include "core/security/channel_auth.h"

namespace chorus {

namespace {

namespace wire = store_protocol;
using Clock = Deadline::Clock;

// What a call is doing, for its error messages, and since when (for "timed out after Xs").
struct Call {
  std::string what;
  Clock::time_point start = Clock::now();
};

struct Response {
  wire::Status status = wire::Status::kOk;
  Bytes value;
};

std::string secondsSince(Clock::time_point start) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(1) << std::chrono::duration<double>(Clock::now() - start).count() << "s";
  return os.str();
}

std::string responseText(const Response& response) { return std::string(response.value.begin(), response.value.end()); }

std::string quoted(const std::string& key) { return "'" + key + "'"; }

}  // namespace

struct StoreClient::Impl {
  Impl(const std::string& hostArg, uint16_t portArg, const std::string& jobIdArg, const std::string& secretArg,
       int rankArg)
      : host(hostArg), port(portArg), jobId(jobIdArg), secret(secretArg), rank(rankArg) {
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    address = (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
  }
  ~Impl() { closeSocket(); }

  std::string where() const { return errorContext(rank, "store " + address) + ": "; }

  void closeSocket() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }

  // Marks the client unusable, closes the socket and throws.
  [[noreturn]] void fail(chorusResult_t code, const std::string& message) {
    unusableReason = message;
    closeSocket();
    throw Error(code, message);
  }

  [[noreturn]] void timedOut(const Call& call) {
    fail(chorusTimeout, where() + call.what + " timed out after " + secondsSince(call.start));
  }

  void ensureUsable(const Call& call) const {
    if (!unusableReason.empty()) {
      throw Error(chorusInvalidUsage,
                  where() + call.what + ": the client is unusable after an earlier error (" + unusableReason + ")");
    }
  }

  void checkKey(const std::string& key, const Call& call) const {
    if (key.size() > wire::kMaxKeyBytes) {
      throwInvalidArgument(where() + call.what + ": key is " + std::to_string(key.size()) + " bytes, more than " +
                           std::to_string(wire::kMaxKeyBytes));
    }
  }

  void checkValueSize(size_t bytes, const Call& call) const {
    if (bytes > wire::kMaxValueBytes) {
      throwInvalidArgument(where() + call.what + ": value is " + std::to_string(bytes) + " bytes, more than " +
                           std::to_string(wire::kMaxValueBytes));
    }
  }

  // Waits until socket s is ready for `events`; false when the deadline passed first.
  bool waitReady(int s, short events, const Deadline& deadline, const Call& call) {
    pollfd p{s, events, 0};
    while (!deadline.expired()) {
      try {
        if (pollWithin({&p, 1}, deadline, 1000, where() + call.what) > 0) return true;
      } catch (const Error& e) {
        fail(e.code(), e.what());
      }
    }
    return false;
  }

  // One connection attempt to every address of host; true when connected (fd set).
  bool tryConnect(const Deadline& deadline, const Call& call, std::string* lastError) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo* addresses = nullptr;
    int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &addresses);
    if (rc != 0) {
      *lastError = std::string("getaddrinfo: ") + (rc == EAI_SYSTEM ? std::strerror(errno) : gai_strerror(rc));
      return false;
    }
    std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> owner(addresses, &::freeaddrinfo);
    for (addrinfo* ai = addresses; ai != nullptr; ai = ai->ai_next) {
      int s = ::socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      if (s < 0) {
        *lastError = std::string("socket: ") + std::strerror(errno);
        continue;
      }
      int err = 0;
      if (::connect(s, ai->ai_addr, ai->ai_addrlen) != 0) {
        err = errno;
        if (err == EINPROGRESS || err == EINTR) {
          if (!waitReady(s, POLLOUT, deadline, call)) {
            ::close(s);
            *lastError = "connect: no answer before the deadline";
            return false;
          }
          socklen_t len = sizeof(err);
          if (::getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
        }
      }
      if (err != 0) {
        *lastError = std::string("connect: ") + std::strerror(err);
        ::close(s);
        continue;
      }
      int one = 1;
      if (::setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0) {
        int setErr = errno;
        ::close(s);
        fail(chorusSystemError, where() + "setsockopt(TCP_NODELAY) failed: " + std::strerror(setErr));
      }
      fd = s;
      return true;
    }
    return false;
  }

  // Connects, retrying with a growing backoff because ranks may start before the server does.
  void connect(const Deadline& deadline) {
    Call call{"connect"};
    std::string lastError = "not tried";
    int backoffMs = 10;
    for (;;) {
      if (tryConnect(deadline, call, &lastError)) return;
      if (deadline.expired()) {
        fail(chorusTimeout,
             where() + "connect timed out after " + secondsSince(call.start) + " (last error: " + lastError + ")");
      }
      CHORUS_TRACE(rank, "store " << address << ": " << lastError << "; retrying in " << backoffMs << " ms");
      sleepWithin(deadline, backoffMs);
      backoffMs = std::min(backoffMs * 2, 500);
    }
  }

  void sendAll(const uint8_t* data, size_t bytes, const Deadline& deadline, const Call& call) {
    while (bytes > 0) {
      ssize_t n = ::send(fd, data, bytes, MSG_NOSIGNAL);
      if (n > 0) {
        data += n;
        bytes -= static_cast<size_t>(n);
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        if (!waitReady(fd, POLLOUT, deadline, call)) timedOut(call);
      } else {
        fail(chorusRemoteError, where() + call.what + ": connection lost: send: " + std::strerror(errno));
      }
    }
  }

  void recvAll(uint8_t* data, size_t bytes, const Deadline& deadline, const Call& call) {
    while (bytes > 0) {
      ssize_t n = ::recv(fd, data, bytes, 0);
      if (n > 0) {
        data += n;
        bytes -= static_cast<size_t>(n);
      } else if (n == 0) {
        fail(chorusRemoteError, where() + call.what + ": connection lost: the store closed the connection");
      } else if (errno == EINTR) {
        continue;
      } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
        if (!waitReady(fd, POLLIN, deadline, call)) timedOut(call);
      } else {
        fail(chorusRemoteError, where() + call.what + ": connection lost: recv: " + std::strerror(errno));
      }
    }
  }

  // Sends one request and reads its response; throws on timeout, loss or a malformed response.
  Response request(wire::Op op, const std::string& key, std::span<const uint8_t> value, const Deadline& deadline,
                   const Call& call) {
    ensureUsable(call);
    Bytes frame = wire::encodeFrame(op, wire::Status::kOk, key, value);
    sendAll(frame.data(), frame.size(), deadline, call);
    uint8_t headerBytes[wire::kHeaderBytes];
    recvAll(headerBytes, sizeof(headerBytes), deadline, call);
    wire::FrameHeader header = wire::decodeHeader(headerBytes);
    std::string problem = wire::headerProblem(header);
    if (problem.empty() && header.op != op) problem = "answer to " + wire::opName(header.op);
    if (problem.empty() && header.keyBytes != 0) problem = "a response carries a key";
    if (!problem.empty()) fail(chorusRemoteError, where() + call.what + ": malformed response: " + problem);
    Response response;
    response.status = header.status;
    response.value.resize(header.valueBytes);
    recvAll(response.value.data(), response.value.size(), deadline, call);
    return response;
  }

  // A status the call does not expect: the server is confused or refused us; the connection is not reused.
  [[noreturn]] void unexpected(const Response& response, const Call& call) {
    fail(chorusRemoteError, where() + call.what + ": refused by the store: " + responseText(response));
  }

  void hello(const Deadline& deadline) {
    Call call{"HELLO"};
    Response response = request(wire::Op::kHello, jobId, wire::encodeUint32(wire::kVersion), deadline, call);
    switch (response.status) {
      case wire::Status::kOk:
        return afterHello(response, deadline);
      case wire::Status::kJobMismatch:
        fail(chorusInvalidUsage, where() + "the store belongs to another job (this rank's job id is '" + jobId +
                                     "'); check CHORUS_STORE and CHORUS_JOB_ID");
      case wire::Status::kBadVersion:
      case wire::Status::kAuthFailed:
        fail(chorusInvalidUsage, where() + "HELLO refused: " + responseText(response));
      default:
        unexpected(response, call);
    }
  }

  // The server said whether it authenticates; both ends must agree on having a secret.
  void afterHello(const Response& response, const Deadline& deadline) {
    if (response.value.size() != 1 ||
        (response.value[0] != wire::kHelloServed && response.value[0] != wire::kHelloAuthenticate)) {
      fail(chorusRemoteError, where() + "HELLO: malformed answer (" + std::to_string(response.value.size()) +
                                  " bytes where one byte 0 or 1 was expected)");
    }
    const bool serverAuthenticates = response.value[0] == wire::kHelloAuthenticate;
    if (!serverAuthenticates && !secret.empty()) {
      fail(chorusInvalidUsage, where() + "the store does not authenticate its clients, but this rank has a secret "
                                         "(CHORUS_SECRET or the unique id's): refusing a store that cannot prove it "
                                         "belongs to this job (was it started without the secret?)");
    }
    if (!serverAuthenticates) return;
    if (secret.empty()) {
      fail(chorusInvalidUsage, where() + "the store requires a secret and this rank has none (set CHORUS_SECRET "
                                         "as the job's launcher did, or use a unique id made by chorusGetUniqueId)");
    }
    try {
      authenticateChannel(fd, secret, wire::helloAuthContext(jobId), ChannelRole::kInitiator, deadline,
                          where() + "HELLO");
    } catch (const AuthenticationError& e) {
      const chorusResult_t code = e.reason() == AuthFailure::kWrongSecret ? chorusInvalidUsage
                                  : e.reason() == AuthFailure::kTimedOut  ? chorusTimeout
                                                                          : chorusRemoteError;
      fail(code, e.what());
    }
  }

  int64_t add(const std::string& key, int64_t delta, const Deadline& deadline, const Call& call) {
    checkKey(key, call);
    Response response = request(wire::Op::kAdd, key, wire::encodeInt64(delta), deadline, call);
    if (response.status == wire::Status::kNotCounter) {
      // The server answered in full, so the connection stays in step and usable.
      throw Error(chorusInvalidUsage, where() + call.what + ": " + responseText(response));
    }
    if (response.status != wire::Status::kOk) unexpected(response, call);
    int64_t sum = 0;
    if (!wire::decodeInt64(response.value, &sum)) fail(chorusRemoteError, where() + call.what + ": malformed answer");
    return sum;
  }

  void set(const std::string& key, const Bytes& value, const Deadline& deadline, const Call& call,
           wire::Op op = wire::Op::kSet) {
    checkKey(key, call);
    checkValueSize(value.size(), call);
    Response response = request(op, key, value, deadline, call);
    if (response.status != wire::Status::kOk) unexpected(response, call);
  }

  // CHECK and CHECK_EACH: the keys checked, sent as one key list; the answer, once its status is kOk.
  Response keyListRequest(wire::Op op, const std::vector<std::string>& keys, const Deadline& deadline,
                          const Call& call) {
    for (const std::string& key : keys) checkKey(key, call);
    Bytes list = wire::encodeKeyList(keys);
    checkValueSize(list.size(), call);
    Response response = request(op, {}, list, deadline, call);
    if (response.status != wire::Status::kOk) unexpected(response, call);
    return response;
  }

  Bytes get(const std::string& key, const Deadline& deadline, const Call& call) {
    checkKey(key, call);
    Response response = request(wire::Op::kGet, key, {}, deadline, call);
    if (response.status != wire::Status::kOk) unexpected(response, call);
    return std::move(response.value);
  }

  std::string host;
  uint16_t port;
  std::string jobId;
  std::string secret;
  int rank;
  std::string address;
  int fd = -1;
  std::string unusableReason;  // non-empty once a call failed in a way that leaves the stream out of step
};

StoreClient::StoreClient(const std::string& host, uint16_t port, const std::string& jobId, int rank, Deadline deadline)
    : StoreClient(host, port, jobId, params::secret(), rank, deadline) {}

StoreClient::StoreClient(const std::string& host, uint16_t port, const std::string& jobId, const std::string& secret,
                         int rank, Deadline deadline)
    : impl_(std::make_unique<Impl>(host, port, jobId, secret, rank)) {
  if (jobId.size() > wire::kMaxKeyBytes) throwInvalidArgument(impl_->where() + "job id longer than 4096 bytes");
  impl_->connect(deadline);
  impl_->hello(deadline);
  CHORUS_TRACE(rank, "connected to store " << impl_->address);
}

StoreClient::~StoreClient() = default;

void StoreClient::set(const std::string& key, const Bytes& value, Deadline deadline) {
  impl_->set(key, value, deadline, Call{"SET key " + quoted(key)});
}

Bytes StoreClient::get(const std::string& key, Deadline deadline) {
  return impl_->get(key, deadline, Call{"GET key " + quoted(key)});
}

int64_t StoreClient::add(const std::string& key, int64_t delta, Deadline deadline) {
  return impl_->add(key, delta, deadline, Call{"ADD key " + quoted(key)});
}

bool StoreClient::check(const std::vector<std::string>& keys, Deadline deadline) {
  Call call{"CHECK of " + std::to_string(keys.size()) + " keys"};
  Response response = impl_->keyListRequest(wire::Op::kCheck, keys, deadline, call);
  if (response.value.size() != 1) impl_->fail(chorusRemoteError, impl_->where() + call.what + ": malformed answer");
  return response.value[0] != 0;
}

void StoreClient::setOwned(const std::string& key, const Bytes& value, Deadline deadline) {
  impl_->set(key, value, deadline, Call{"SET_OWNED key " + quoted(key)}, wire::Op::kSetOwned);
}

Bytes StoreClient::compareSet(const std::string& key, const Bytes& expected, const Bytes& desired, Deadline deadline) {
  Call call{"COMPARE_SET key " + quoted(key)};
  impl_->checkKey(key, call);
  Bytes value = wire::encodeCompareSet(expected, desired);
  impl_->checkValueSize(value.size(), call);
  Response response = impl_->request(wire::Op::kCompareSet, key, value, deadline, call);
  if (response.status != wire::Status::kOk) impl_->unexpected(response, call);
  return std::move(response.value);
}

std::vector<bool> StoreClient::checkEach(const std::vector<std::string>& keys, Deadline deadline) {
  Call call{"CHECK_EACH of " + std::to_string(keys.size()) + " keys"};
  Response response = impl_->keyListRequest(wire::Op::kCheckEach, keys, deadline, call);
  if (response.value.size() != keys.size()) {
    impl_->fail(chorusRemoteError, impl_->where() + call.what + ": malformed answer");
  }
  std::vector<bool> exists(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) exists[i] = response.value[i] != 0;
  return exists;
}

void StoreClient::barrier(const std::string& name, int count, Deadline deadline) {
  if (count < 1) throwInvalidArgument(impl_->where() + "barrier " + quoted(name) + ": count must be >= 1");
  // Arrivals are counted forever, so a name can be reused: arrival n belongs to generation (n - 1) / count,
  // and the arrival that completes a generation releases it by setting that generation's done key.
  const std::string prefix = "__chorus/barrier/" + name;
  Call call{"barrier " + quoted(name) + " of " + std::to_string(count)};
  int64_t arrival = impl_->add(prefix + "/arrived", 1, deadline, call);
  int64_t generation = (arrival - 1) / count;
  int64_t arrivedBefore = (arrival - 1) % count + 1;
  const std::string doneKey = prefix + "/done/" + std::to_string(generation);
  if (arrival % count == 0) impl_->set(doneKey, {}, deadline, call);
  call.what += " (" + std::to_string(arrivedBefore) + " of " + std::to_string(count) + " had arrived with this rank)";
  impl_->get(doneKey, deadline, call);
}

const std::string& StoreClient::address() const { return impl_->address; }

std::string StoreClient::localHost() const {
  sockaddr_storage self{};
  socklen_t length = sizeof(self);
  if (impl_->fd < 0 || ::getsockname(impl_->fd, reinterpret_cast<sockaddr*>(&self), &length) != 0) return "";
  char host[NI_MAXHOST];
  if (::getnameinfo(reinterpret_cast<sockaddr*>(&self), length, host, sizeof(host), nullptr, 0, NI_NUMERICHOST) != 0) {
    return "";
  }
  const std::string text = host;
  // An IPv4 peer reached through an IPv6 socket: the plain IPv4 address is what others dial.
  return text.rfind("::ffff:", 0) == 0 && text.find('.') != std::string::npos ? text.substr(7) : text;
}

}  // namespace chorus
