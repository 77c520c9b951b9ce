// Internal to the store server (store_server.cc, store_session.cc): the service, which owns the key/value state and
// the listening socket, and one Session per client connection, which reads requests and answers them.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

// Standalone Asio (libasio-dev): header-only, without Boost.
#include <asio.hpp>

#include "core/bootstrap/store.h"
#include "core/bootstrap/store_protocol.h"
#include "core/logging.h"
#include "core/security/channel_handshake.h"

namespace chorus {

// Named rather than anonymous: StoreServer::Impl holds these types, and unity builds would warn (subobject-linkage).
namespace store_server_detail {

using asio::ip::tcp;
using std::error_code;
namespace wire = store_protocol;

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
  asio::steady_timer helloTimer_;
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
  StoreService(const std::string& bindHost, uint16_t port, std::string jobId, std::string secret,
               double helloSeconds);

  // Closes the acceptor and every connection (parked GETs included) on the server thread, then joins it.
  ~StoreService();

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
  void pendingDone();

 private:
  void bind(const std::string& bindHost, uint16_t port);

  void acceptNext();

  void serve();

  void stopOnServerThread();

  asio::io_context ioc_;
  tcp::acceptor acceptor_{ioc_};
  asio::steady_timer acceptRetry_{ioc_};
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

}  // namespace store_server_detail
}  // namespace chorus
