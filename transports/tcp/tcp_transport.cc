#include "transports/tcp/tcp_transport.h"

#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <map>

#include "src/core/error.h"
#include "src/core/logging.h"
#include "topology/network_interfaces.h"
#include "transports/tcp/tcp_connection.h"

namespace chorus {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

// The first bytes on every data socket: who is calling, for which job, which stripe.
struct TcpHello {
  uint32_t magic;
  uint32_t version;
  int32_t from;
  int32_t to;
  uint32_t index;
  uint32_t nsocks;
  char job[48];
};
constexpr uint32_t kHelloMagic = 0x4c484843;  // "CHHL"

void fillJob(char (&dst)[48], const std::string& key) {
  std::memset(dst, 0, sizeof(dst));
  std::memcpy(dst, key.data(), std::min(key.size(), sizeof(dst)));
}

// Blocks (polling) until all of buf is written or the deadline passes.
void writeAll(int fd, const void* buf, size_t n, Deadline deadline, const std::string& context) {
  const char* p = static_cast<const char*>(buf);
  while (n > 0) {
    ssize_t r = ::send(fd, p, n, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (r > 0) {
      p += r;
      n -= static_cast<size_t>(r);
      continue;
    }
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK) throwSystemError(context, "send", errno);
    if (deadline.expired()) throw Error(chorusTimeout, context + ": timed out writing");
    pollfd pfd{fd, POLLOUT, 0};
    ::poll(&pfd, 1, deadline.remainingMs(100));
  }
}

void tuneSocket(tcp::socket& s, const std::string& context) {
  boost::system::error_code ec;
  s.set_option(tcp::no_delay(true), ec);
  if (!ec) s.non_blocking(true, ec);
  if (ec) throw Error(chorusSystemError, context + ": setting socket options failed: " + ec.message());
}

}  // namespace

void splitHostPort(const std::string& s, const std::string& what, std::string* host, uint16_t* port) {
  size_t colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == s.size()) {
    throwInvalidArgument(what + " '" + s + "' is not host:port");
  }
  std::string h = s.substr(0, colon);
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  char* end = nullptr;
  long p = std::strtol(s.c_str() + colon + 1, &end, 10);
  if (*end != '\0' || p < 0 || p > 65535) throwInvalidArgument(what + " '" + s + "' has a bad port");
  *host = h;
  *port = static_cast<uint16_t>(p);
}

TcpTransport::TcpTransport(int rank, std::string jobKey, int nsocks, std::string ifnameSpec)
    : rank_(rank), jobKey_(std::move(jobKey)), nsocks_(nsocks), ifnameSpec_(std::move(ifnameSpec)), acceptor_(io_) {}

void TcpTransport::describeSelf(PeerCard& card) {
  NetworkInterface nic = chooseNetworkInterface(ifnameSpec_);
  boost::system::error_code ec;
  auto addr = asio::ip::make_address(nic.address, ec);
  tcp::endpoint ep(addr, 0);
  std::string context = "rank " + std::to_string(rank_) + ": tcp listen on " + nic.name + " " + nic.address;
  acceptor_.open(ep.protocol(), ec);
  if (!ec) acceptor_.bind(ep, ec);
  if (!ec) acceptor_.listen(4096, ec);
  if (!ec) acceptor_.non_blocking(true, ec);
  if (ec) throw Error(chorusSystemError, context + " failed: " + ec.message());
  auto local = acceptor_.local_endpoint(ec);
  std::string host = addr.is_v6() ? "[" + nic.address + "]" : nic.address;
  card.entries["tcp.addr"] = host + ":" + std::to_string(local.port());
  card.entries["tcp.nsocks"] = std::to_string(nsocks_);
  CHORUS_INFO(rank_, "tcp transport listening on " << nic.name << " " << card.entries["tcp.addr"]);
}

bool TcpTransport::canConnect(const PeerCard& self, const PeerCard& peer) const {
  return self.entries.count("tcp.addr") && peer.entries.count("tcp.addr");
}

tcp::socket TcpTransport::dial(const std::string& address, int peer, int index, int nsocks, Deadline deadline) {
  std::string context = "rank " + std::to_string(rank_) + ": tcp connect to rank " + std::to_string(peer) + " at " +
                        address;
  std::string host;
  uint16_t port;
  splitHostPort(address, "peer address", &host, &port);
  boost::system::error_code ec;
  tcp::endpoint ep(asio::ip::make_address(host, ec), port);
  if (ec) throw Error(chorusRemoteError, context + ": bad address: " + ec.message());
  int delayMs = 5;
  for (;;) {
    tcp::socket s(io_);
    s.open(ep.protocol(), ec);
    if (ec) throw Error(chorusSystemError, context + ": socket failed: " + ec.message());
    s.non_blocking(true, ec);
    s.connect(ep, ec);
    if (ec == asio::error::in_progress || ec == asio::error::would_block) {
      pollfd pfd{s.native_handle(), POLLOUT, 0};
      while (::poll(&pfd, 1, deadline.remainingMs(100)) == 0 && !deadline.expired()) {
      }
      int err = 0;
      socklen_t len = sizeof(err);
      if (pfd.revents == 0) {
        err = ETIMEDOUT;
      } else if (getsockopt(s.native_handle(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) {
        err = errno;
      }
      ec = boost::system::error_code(err, boost::system::system_category());
    }
    if (!ec) {
      tuneSocket(s, context);
      TcpHello hello{kHelloMagic, 1, rank_, peer, static_cast<uint32_t>(index), static_cast<uint32_t>(nsocks), {}};
      fillJob(hello.job, jobKey_);
      writeAll(s.native_handle(), &hello, sizeof(hello), deadline, context);
      return s;
    }
    if (deadline.expired()) throw Error(chorusTimeout, context + " timed out: " + ec.message());
    // Refused or reset: the peer's listener is published before its card, so this is a transient; back off.
    ::poll(nullptr, 0, std::min(delayMs, deadline.remainingMs(delayMs)));
    delayMs = std::min(delayMs * 2, 200);
  }
}

std::vector<std::unique_ptr<Connection>> TcpTransport::connectAll(const PeerCard& self,
                                                                   const std::vector<PeerCard>& peers,
                                                                   Deadline deadline) {
  // Sockets by peer, then stripe index; a peer's connection is complete when all its stripes are in.
  std::map<int, std::vector<tcp::socket>> socks;
  std::map<int, int> want;  // peer -> nsocks for that pair (the smaller of the two ranks' settings)
  std::map<int, std::string> addrOf;
  int expectedIncoming = 0;
  for (const PeerCard& p : peers) {
    int n = std::min(nsocks_, std::atoi(p.entries.at("tcp.nsocks").c_str()));
    want[p.rank] = n < 1 ? 1 : n;
    addrOf[p.rank] = p.entries.at("tcp.addr");
    for (int i = 0; i < want[p.rank]; ++i) socks[p.rank].emplace_back(io_);
    if (p.rank < rank_) expectedIncoming += want[p.rank];
  }
  // Dial the higher ranks (the kernel's backlog completes these without the peer's help).
  for (const PeerCard& p : peers) {
    if (p.rank <= rank_) continue;
    for (int i = 0; i < want[p.rank]; ++i) socks[p.rank][i] = dial(addrOf[p.rank], p.rank, i, want[p.rank], deadline);
  }
  // Accept the lower ranks; read each hello without blocking so that a silent stranger cannot stall us.
  struct Pending {
    tcp::socket sock;
    TcpHello hello;
    size_t got;
  };
  std::vector<Pending> pending;
  std::map<int, std::vector<bool>> have;
  for (auto& [r, n] : want) have[r].assign(n, r > rank_);
  int accepted = 0;
  while (accepted < expectedIncoming) {
    if (deadline.expired()) {
      std::string missing;
      for (auto& [r, v] : have) {
        for (bool b : v) {
          if (!b) {
            missing += (missing.empty() ? "" : ", ") + std::to_string(r);
            break;
          }
        }
      }
      throw Error(chorusTimeout, "rank " + std::to_string(rank_) +
                                     ": tcp connection setup timed out waiting for ranks " + missing);
    }
    std::vector<pollfd> fds{{acceptor_.native_handle(), POLLIN, 0}};
    for (auto& p : pending) fds.push_back({p.sock.native_handle(), POLLIN, 0});
    ::poll(fds.data(), fds.size(), deadline.remainingMs(100));
    boost::system::error_code ec;
    for (;;) {
      tcp::socket s(io_);
      acceptor_.accept(s, ec);
      if (ec) break;
      s.non_blocking(true, ec);
      pending.push_back(Pending{std::move(s), {}, 0});
    }
    for (size_t i = 0; i < pending.size();) {
      Pending& p = pending[i];
      ssize_t r = ::recv(p.sock.native_handle(), reinterpret_cast<char*>(&p.hello) + p.got, sizeof(TcpHello) - p.got,
                         MSG_DONTWAIT);
      if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        ++i;
        continue;
      }
      std::string why;
      if (r <= 0) {
        why = r == 0 ? "closed before its hello" : std::string("recv failed: ") + std::strerror(errno);
      } else {
        p.got += static_cast<size_t>(r);
        if (p.got < sizeof(TcpHello)) {
          ++i;
          continue;
        }
        const TcpHello& h = p.hello;
        char job[48];
        fillJob(job, jobKey_);
        if (h.magic != kHelloMagic || h.version != 1) {
          why = "not a Chorus hello";
        } else if (std::memcmp(job, h.job, sizeof(job)) != 0) {
          why = "hello for another job or communicator";
        } else if (h.to != rank_ || !have.count(h.from) || h.from >= rank_ || h.nsocks != have[h.from].size() ||
                   h.index >= h.nsocks || have[h.from][h.index]) {
          why = "unexpected hello (from " + std::to_string(h.from) + " stripe " + std::to_string(h.index) + ")";
        }
      }
      if (why.empty()) {
        tuneSocket(p.sock, "rank " + std::to_string(rank_) + ": tcp accept from rank " + std::to_string(p.hello.from));
        have[p.hello.from][p.hello.index] = true;
        socks[p.hello.from][p.hello.index] = std::move(p.sock);
        ++accepted;
      } else {
        boost::system::error_code ignored;
        auto remote = p.sock.remote_endpoint(ignored);
        CHORUS_WARN(rank_, "tcp: refused a connection from " << remote.address().to_string() << ":" << remote.port()
                                                            << ": " << why);
      }
      pending.erase(pending.begin() + static_cast<long>(i));
    }
  }
  std::vector<std::unique_ptr<Connection>> out;
  for (auto& [r, v] : socks) {
    // The sockets outlive this transport's io_context: hand their descriptors over.
    std::vector<int> fds;
    for (auto& s : v) fds.push_back(s.release());
    out.push_back(std::make_unique<TcpConnection>(rank_, r, addrOf[r], fds));
  }
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  return out;
}

}  // namespace chorus
