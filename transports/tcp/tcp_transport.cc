#include "transports/tcp/tcp_transport.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <map>

#include "core/deadline_wait.h"
#include "core/error.h"
#include "core/host_port.h"
#include "core/logging.h"
#include "core/params.h"
#include "core/security/channel_auth.h"
#include "topology/network_interfaces.h"
#include "transports/tcp/socket_buffers.h"
#include "transports/tcp/socket_exact.h"
#include "transports/tcp/tcp_connection.h"
#include "transports/tcp/tcp_hello.h"
#include "transports/tcp/tcp_rail_probe.h"
#include "transports/tcp/tcp_rails.h"

namespace chorus {

using asio::ip::tcp;

namespace {

using Clock = std::chrono::steady_clock;

// The stripe count a peer's card asks for; a card without a sane one is malformed.
int cardSockets(const PeerCard& card, int selfRank, const std::string& key) {
  auto it = card.entries.find(key);
  int n = 0;
  if (it != card.entries.end()) {
    const std::string& text = it->second;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || end != text.data() + text.size()) n = 0;
  }
  if (n < 1 || n > static_cast<int>(TcpHello::kMaxSockets)) {
    throw Error(chorusRemoteError, errorContext(selfRank, card.rank) + ": the peer card has no valid " + key + " (1.." +
                                       std::to_string(TcpHello::kMaxSockets) + ")");
  }
  return n;
}

void tuneSocket(tcp::socket& s, const std::string& context) {
  std::error_code ec;
  s.set_option(tcp::no_delay(true), ec);
  // Buffers sized by what the machine allows (socket_buffers.h). Not on Multipath TCP sockets (made IPPROTO_MPTCP,
  // as mptcpize does): fixed buffers there hold an allreduce over two subflows to a tenth of what the kernel's
  // autotuning reaches (perf/results/tcp.md, "Multipath TCP").
  int protocol = 0;
  socklen_t len = sizeof(protocol);
  const bool mptcp =
      getsockopt(s.native_handle(), SOL_SOCKET, SO_PROTOCOL, &protocol, &len) == 0 && protocol == IPPROTO_MPTCP;
  if (!ec && !mptcp) {
    if (int err = applySocketBuffers(s.native_handle())) ec = std::error_code(err, std::system_category());
  }
  if (!ec) s.non_blocking(true, ec);
  if (ec) throw Error(chorusSystemError, context + ": setting socket options failed: " + ec.message());
}

}  // namespace

// A dialled data socket; while `auth` is set its handshake is still running.
struct TcpTransport::Dialled {
  tcp::socket sock;
  int peer;
  int index;
  std::unique_ptr<ChannelAuthenticator> auth;
};

TcpTransport::TcpTransport(int rank, std::string jobKey, int nsocks, std::string ifnameSpec)
    : TcpTransport(rank, std::move(jobKey), nsocks, std::move(ifnameSpec), params::secret()) {}

TcpTransport::TcpTransport(int rank, std::string jobKey, int nsocks, std::string ifnameSpec, std::string secret)
    : rank_(rank),
      jobKey_(std::move(jobKey)),
      secret_(std::move(secret)),
      nsocks_(nsocks),
      ifnameSpec_(std::move(ifnameSpec)) {}

void TcpTransport::describeSelf(PeerCard& card) {
  const size_t railsFit = std::max<size_t>(1, TcpHello::kMaxSockets / static_cast<size_t>(std::max(1, nsocks_)));
  rails_ = chooseNetworkInterfaces(ifnameSpec_, std::min(maxRails_, railsFit), family_);
  std::vector<TcpRail> listed;
  for (const NetworkInterface& nic : rails_) {
    std::error_code ec;
    auto addr = asio::ip::make_address(nic.address, ec);
    tcp::endpoint ep(addr, 0);
    std::string context = errorContext(rank_, "tcp listen on " + nic.name + " " + nic.address);
    tcp::acceptor& acceptor = acceptors_.emplace_back(io_);
    acceptor.open(ep.protocol(), ec);
    if (!ec) acceptor.bind(ep, ec);
    if (!ec) acceptor.listen(4096, ec);
    if (!ec) acceptor.non_blocking(true, ec);
    if (ec) throw Error(chorusSystemError, context + " failed: " + ec.message());
    auto local = acceptor.local_endpoint(ec);
    listed.push_back({nic.name, joinHostPort(nic.address, local.port())});
  }
  card.entries[cardPrefix_ + ".addr"] = listed[0].address;
  card.entries[cardPrefix_ + ".nsocks"] = std::to_string(nsocks_);
  card.entries[cardPrefix_ + ".rails"] = encodeRails(listed);
  CHORUS_INFO(rank_, cardPrefix_ << " transport listening on "
                                 << (listed.size() > 1 ? encodeRails(listed) : rails_[0].name + " " + listed[0].address)
                                 << "; " << describeSocketBuffers(socketBufferPlan()));
}

bool TcpTransport::canConnect(const PeerCard& self, const PeerCard& peer) const {
  return self.entries.count(cardPrefix_ + ".addr") && peer.entries.count(cardPrefix_ + ".addr");
}

TcpTransport::Dialled TcpTransport::dial(const std::string& address, const NetworkInterface& from, int peer,
                                         int index, int nsocks, Deadline deadline) {
  std::string context = errorContext(
      rank_, peer, "tcp connect to " + address + (rails_.size() > 1 ? " from " + from.name + " " + from.address : ""));
  std::string host;
  uint16_t port;
  splitHostPort(address, "peer address", &host, &port);
  std::error_code ec;
  // A link-local peer is reached through this end's own interface: its zone, not the one the peer wrote.
  tcp::endpoint ep(asio::ip::make_address(withLocalZone(host, from.name), ec), port);
  if (ec) throw Error(chorusRemoteError, context + ": bad address: " + ec.message());
  int delayMs = 5;
  for (;;) {
    tcp::socket s(io_);
    s.open(ep.protocol(), ec);
    if (ec) throw Error(chorusSystemError, context + ": socket failed: " + ec.message());
    if (rails_.size() > 1) {
      // Leave by this rail's interface: the kernel picks the source by route otherwise, and may send every rail's
      // sockets out of one NIC.
      s.bind(tcp::endpoint(asio::ip::make_address(from.address, ec), 0), ec);
      if (ec) throw Error(chorusSystemError, context + ": bind to " + from.address + " failed: " + ec.message());
    }
    s.non_blocking(true, ec);
    s.connect(ep, ec);
    if (ec == asio::error::in_progress || ec == asio::error::would_block) {
      pollfd pfd{s.native_handle(), POLLOUT, 0};
      while (pollWithin({&pfd, 1}, deadline, 100, context) == 0 && !deadline.expired()) {
      }
      int err = 0;
      socklen_t len = sizeof(err);
      if (pfd.revents == 0) {
        err = ETIMEDOUT;
      } else if (getsockopt(s.native_handle(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) {
        err = errno;
      }
      ec = std::error_code(err, std::system_category());
    }
    if (!ec) {
      tuneSocket(s, context);
      TcpHello hello;
      hello.from = rank_;
      hello.to = peer;
      hello.index = static_cast<uint32_t>(index);
      hello.nsocks = static_cast<uint32_t>(nsocks);
      hello.flags = (secret_.empty() ? 0 : TcpHello::kFlagAuthenticate) | (encrypt_ ? TcpHello::kFlagEncrypt : 0);
      hello.jobKeyHash = sha256(jobKey_);
      const auto bytes = hello.encode();
      sendExact(s.native_handle(), bytes.data(), bytes.size(), deadline, context);
      Dialled d{std::move(s), peer, index, nullptr};
      if (!secret_.empty()) {
        d.auth = std::make_unique<ChannelAuthenticator>(d.sock.native_handle(), secret_, tcpAuthContext(bytes),
                                                        ChannelRole::kInitiator, context);
      }
      return d;
    }
    throwIfExpired(deadline, [&] { return context + " timed out: " + ec.message(); });
    // Refused or reset: the peer's listener is published before its card, so this is a transient; back off.
    sleepWithin(deadline, delayMs);
    delayMs = std::min(delayMs * 2, 200);
  }
}

namespace {

// An accepted socket until its hello is read and checked and, with a secret, its handshake is done.
struct Pending {
  tcp::socket sock;
  std::string remote;  // "ip:port", for messages
  Clock::time_point since;
  std::array<uint8_t, TcpHello::kBytes> helloBytes{};
  size_t got = 0;
  TcpHello hello;
  std::unique_ptr<ChannelAuthenticator> auth;
};

enum class PendingState { kWaiting, kReady, kRefused };

}  // namespace

void TcpTransport::requireEncryption() {
  if (secret_.empty()) {
    throw Error(chorusInvalidArgument, errorContext(rank_) +
                                           ": CHORUS_ENCRYPT=1 needs the job's shared secret to key its links, and "
                                           "there is none (set CHORUS_SECRET alike on every rank; chorusrun does)");
  }
  encrypt_ = true;
}

TcpLinkKeys TcpTransport::linkKeys(const ChannelHandshake& handshake, ChannelRole role) {
  const ChannelRole other = role == ChannelRole::kInitiator ? ChannelRole::kAcceptor : ChannelRole::kInitiator;
  return TcpLinkKeys{handshake.recordKey(role), handshake.recordKey(other)};
}

std::vector<std::unique_ptr<Connection>> TcpTransport::connectAll(const PeerCard& self,
                                                                   const std::vector<PeerCard>& peers,
                                                                   Deadline deadline) {
  // Sockets by peer, then stripe index; a peer's connection is complete when all its stripes are in.
  std::map<int, std::vector<tcp::socket>> socks;
  std::map<int, std::vector<TcpLinkKeys>> keys;  // encrypted: by peer, then stripe
  std::map<int, int> want;  // peer -> nsocks for that pair (the smaller of the two ranks' settings)
  std::map<int, int> perRail;  // peer -> sockets per rail of that pair
  PairRails railsOf;
  std::map<int, std::string> addrOf;
  int expectedIncoming = 0;
  std::vector<std::string> ours;
  for (const NetworkInterface& nic : rails_) ours.push_back(nic.name);
  for (const PeerCard& p : peers) {
    const std::vector<TcpRail> theirs = cardRails(p, cardPrefix_, rank_);
    std::vector<std::string> names;
    for (const TcpRail& r : theirs) names.push_back(r.ifname);
    for (auto [low, high] : p.rank > rank_ ? pairRails(ours, names) : pairRails(names, ours)) {
      const size_t mine = p.rank > rank_ ? low : high;
      railsOf[p.rank].emplace_back(mine, theirs[p.rank > rank_ ? high : low]);
    }
    perRail[p.rank] = std::min(nsocks_, cardSockets(p, rank_, cardPrefix_ + ".nsocks"));
    want[p.rank] = perRail[p.rank] * static_cast<int>(railsOf[p.rank].size());
    addrOf[p.rank] = railsOf[p.rank][0].second.address;
    for (int i = 0; i < want[p.rank]; ++i) socks[p.rank].emplace_back(io_);
    if (encrypt_) keys[p.rank].resize(static_cast<size_t>(want[p.rank]));
    if (p.rank < rank_) expectedIncoming += want[p.rank];
  }
  const Sha256Digest jobKeyHash = sha256(jobKey_);
  // Dial the higher ranks (the kernel's backlog completes these without the peer's help); their handshakes, if
  // any, run in the loop below together with the accepted sockets', so no rank waits on another's dialling.
  std::vector<Dialled> dialling;
  for (const PeerCard& p : peers) {
    if (p.rank <= rank_) continue;
    for (int i = 0; i < want[p.rank]; ++i) {
      const auto& [mine, theirs] = railsOf[p.rank][static_cast<size_t>(i / perRail[p.rank])];
      Dialled d = dial(theirs.address, rails_[mine], p.rank, i, want[p.rank], deadline);
      if (d.auth) {
        dialling.push_back(std::move(d));
      } else {
        socks[p.rank][i] = std::move(d.sock);
      }
    }
  }
  // Accept the lower ranks; read each hello and run each handshake without blocking, so that a silent or
  // misbehaving stranger can neither stall us (it is dropped after kHandshakeSeconds) nor exhaust us (at most
  // kMaxPendingConnections are read at once).
  std::vector<Pending> pending;
  std::map<int, std::vector<bool>> have;
  for (auto& [r, n] : want) have[r].assign(n, r > rank_);
  int accepted = 0;
  const bool withSecret = !secret_.empty();
  while (accepted < expectedIncoming || !dialling.empty()) {
    throwIfExpired(deadline, [&] {
      std::vector<int> missing;
      for (auto& [r, v] : have) {
        if (std::find(v.begin(), v.end(), false) != v.end()) missing.push_back(r);
      }
      for (const Dialled& d : dialling) missing.push_back(d.peer);
      // A rank dialled on several stripes, or both dialled and awaited, is named once.
      std::sort(missing.begin(), missing.end());
      missing.erase(std::unique(missing.begin(), missing.end()), missing.end());
      return errorContext(rank_, "tcp connection setup") + ": timed out waiting for ranks " + formatRankList(missing);
    });
    std::vector<pollfd> fds;
    const bool acceptMore = pending.size() < kMaxPendingConnections;
    for (auto& acceptor : acceptors_) {
      if (acceptMore) fds.push_back({acceptor.native_handle(), POLLIN, 0});
    }
    for (auto& p : pending) fds.push_back({p.sock.native_handle(), p.auth ? p.auth->pollEvents() : short(POLLIN), 0});
    for (auto& d : dialling) fds.push_back({d.sock.native_handle(), d.auth->pollEvents(), 0});
    pollWithin(fds, deadline, 100, errorContext(rank_, "tcp connection setup"));
    std::error_code ec;
    for (auto& acceptor : acceptors_) {
      while (pending.size() < kMaxPendingConnections) {
        tcp::socket s(io_);
        acceptor.accept(s, ec);
        if (ec) break;
        s.non_blocking(true, ec);
        std::error_code ignored;
        auto remote = s.remote_endpoint(ignored);
        Pending p{std::move(s), remote.address().to_string() + ":" + std::to_string(remote.port()), Clock::now(), {},
                  0, {}, nullptr};
        pending.push_back(std::move(p));
      }
    }
    // A peer we dialled that fails the handshake is not a stranger: the job cannot go on without it.
    for (size_t i = 0; i < dialling.size();) {
      if (dialling[i].auth->advance()) {
        if (encrypt_) {
          keys[dialling[i].peer][static_cast<size_t>(dialling[i].index)] =
              linkKeys(dialling[i].auth->handshake(), ChannelRole::kInitiator);
        }
        socks[dialling[i].peer][dialling[i].index] = std::move(dialling[i].sock);
        dialling.erase(dialling.begin() + static_cast<long>(i));
      } else {
        ++i;
      }
    }
    for (size_t i = 0; i < pending.size();) {
      Pending& p = pending[i];
      std::string why;
      PendingState state = PendingState::kWaiting;
      if (!p.auth) {
        ssize_t r = ::recv(p.sock.native_handle(), p.helloBytes.data() + p.got, p.helloBytes.size() - p.got,
                           MSG_DONTWAIT);
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
          // nothing yet
        } else if (r <= 0) {
          why = r == 0 ? "closed before its hello was complete" : std::string("recv failed: ") + std::strerror(errno);
        } else if ((p.got += static_cast<size_t>(r)) == p.helloBytes.size()) {
          if (!TcpHello::decode(p.helloBytes, &p.hello, &why)) {
            // why says what is wrong
          } else if (why = incomingHelloProblem(p.hello, rank_, jobKeyHash, withSecret, have, encrypt_); !why.empty()) {
            // refused
          } else if (withSecret) {
            p.auth = std::make_unique<ChannelAuthenticator>(
                p.sock.native_handle(), secret_, tcpAuthContext(p.helloBytes), ChannelRole::kAcceptor,
                errorContext(rank_, "tcp accept from " + p.remote + " (claiming rank " + std::to_string(p.hello.from) +
                                        " stripe " + std::to_string(p.hello.index) + ")"));
          } else {
            state = PendingState::kReady;
          }
        }
      }
      if (p.auth && why.empty()) {
        try {
          if (p.auth->advance()) state = PendingState::kReady;
        } catch (const AuthenticationError& e) {
          why = e.what();
        }
      }
      if (state == PendingState::kReady && have[p.hello.from][p.hello.index]) {
        why = "a second connection for rank " + std::to_string(p.hello.from) + " stripe " +
              std::to_string(p.hello.index);
      }
      if (why.empty() && state == PendingState::kWaiting &&
          std::chrono::duration<double>(Clock::now() - p.since).count() > kHandshakeSeconds) {
        why = std::string("no complete hello") + (withSecret ? " and authentication" : "") + " within " +
              std::to_string(static_cast<int>(kHandshakeSeconds)) + "s";
      }
      if (!why.empty()) state = PendingState::kRefused;
      if (state == PendingState::kWaiting) {
        ++i;
        continue;
      }
      if (state == PendingState::kReady) {
        tuneSocket(p.sock, errorContext(rank_, p.hello.from, "tcp accept"));
        have[p.hello.from][p.hello.index] = true;
        if (encrypt_) keys[p.hello.from][p.hello.index] = linkKeys(p.auth->handshake(), ChannelRole::kAcceptor);
        socks[p.hello.from][p.hello.index] = std::move(p.sock);
        ++accepted;
      } else {
        CHORUS_WARN(rank_, "tcp: refused a connection from " << p.remote << ": " << why);
      }
      pending.erase(pending.begin() + static_cast<long>(i));
    }
  }
  // The sockets outlive this transport's io_context: hand their descriptors over.
  std::map<int, std::vector<int>> fdsOf;
  for (auto& [r, v] : socks) {
    for (auto& s : v) fdsOf[r].push_back(s.release());
  }
  std::error_code ignored;
  for (auto& acceptor : acceptors_) acceptor.close(ignored);
  std::map<int, RailPlan> plans;
  try {
    plans = planRails(fdsOf, perRail, railsOf, deadline);
  } catch (...) {
    for (auto& [r, fds] : fdsOf) {
      for (int fd : fds) ::close(fd);
    }
    throw;
  }
  std::vector<std::unique_ptr<Connection>> out;
  for (auto& [r, fds] : fdsOf) {
    out.push_back(std::make_unique<TcpConnection>(rank_, r, addrOf[r], fds,
                                                  encrypt_ ? keys[r] : std::vector<TcpLinkKeys>{}, plans[r]));
  }
  return out;
}

std::map<int, RailPlan> TcpTransport::planRails(std::map<int, std::vector<int>>& fds, const std::map<int, int>& perRail,
                                                const PairRails& railsOf, Deadline deadline) {
  std::map<int, RailPlan> plans;
  for (auto& [peer, v] : fds) {  // in rank order
    RailPlan& plan = plans[peer];
    plan.perRail = static_cast<size_t>(perRail.at(peer));
    plan.defaultWidth = defaultWidth_;
    for (const auto& rail : railsOf.at(peer)) plan.interfaces.push_back(rails_[rail.first].name);
    const size_t rails = plan.interfaces.size();
    if (rails < 2) continue;
    std::vector<int> first;
    for (size_t r = 0; r < rails; ++r) first.push_back(v[r * plan.perRail]);
    const std::string context = errorContext(rank_, peer, "tcp rails");
    plan.weights = peer > rank_ ? probeRailsAsSender(first, deadline, context)
                                : probeRailsAsReceiver(first, deadline, context);
    CHORUS_INFO(rank_, "tcp: rails to rank " << peer << plan.describe());
  }
  return plans;
}

}  // namespace chorus
