// The TCP transport: every pair can use it; lower rank connects to higher, CHORUS_NSOCKS sockets per pair and rail.
// With several interfaces (tcp_rails.h) it listens on each, dials rail r from its own rail r's address, and measures
// each pair's rails once (tcp_rail_probe.h) to weigh their stripes.
// Each data socket opens with a hello (tcp_hello.h) and, when the job has a secret, the channel handshake
// (core/security/channel_auth.h). Connections that fail either are refused and logged; the job goes on.
#pragma once

#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "core/security/channel_handshake.h"
#include "topology/network_interfaces.h"
#include "transports/tcp/tcp_connection.h"
#include "transports/tcp/tcp_rails.h"
#include "transports/transport.h"

namespace chorus {

class TcpTransport final : public Transport {
 public:
  // A connection that has not completed its hello and handshake within this long is dropped.
  static constexpr double kHandshakeSeconds = 10.0;
  // At most this many accepted connections may be that far at once; more wait in the kernel's backlog.
  static constexpr size_t kMaxPendingConnections = 64;
  // At most this many interfaces are striped over (and no more than the sockets a pair may have, 16, allow).
  static constexpr size_t kMaxRails = 4;
  // The sockets per rail a pair opens when the autotuner may choose among 1, 2 and 4 (CHORUS_AUTOTUNE).
  static constexpr int kTunedSockets = 4;

  // jobKey keeps connections of other jobs or communicators out; nsocks sockets per peer (1..16).
  // The secret is CHORUS_SECRET (params::secret()); empty: connections are not authenticated.
  TcpTransport(int rank, std::string jobKey, int nsocks, std::string ifnameSpec);
  // The same with an explicit secret (e.g. the one a unique id carries).
  TcpTransport(int rank, std::string jobKey, int nsocks, std::string ifnameSpec, std::string secret);
  // The card entries' prefix ("tcp": tcp.addr, tcp.nsocks): another transport that keeps TCP connections of its
  // own beside its data path (ib's out-of-band channel) publishes them under its own.
  void setCardPrefix(std::string prefix) { cardPrefix_ = std::move(prefix); }
  // Messages stripe over this many of a pair's sockets per rail unless a call says otherwise (the rest stay open
  // for calls that ask for them: the autotuner's); 0: all.
  void setDefaultStripeWidth(int sockets) { defaultWidth_ = static_cast<size_t>(std::max(0, sockets)); }
  // Only the first interface CHORUS_SOCKET_IFNAME picks (ib's out-of-band channel carries too little to stripe).
  void useOneRail() { maxRails_ = 1; }
  // Only addresses of this family (CHORUS_SOCKET_FAMILY: AF_INET, AF_INET6; AF_UNSPEC either).
  void setSocketFamily(int family) { family_ = family; }
  // Every data socket carries AES-128-GCM records keyed from its handshake (CHORUS_ENCRYPT). Throws
  // chorusInvalidArgument without a secret: the keys come from it.
  void requireEncryption();
  void describeSelf(PeerCard& card) override;
  bool canConnect(const PeerCard& self, const PeerCard& peer) const override;
  std::vector<std::unique_ptr<Connection>> connectAll(const PeerCard& self, const std::vector<PeerCard>& peers,
                                                       Deadline deadline) override;

 private:
  struct Dialled;
  // A socket to `address` ("host:port") from this rank's `from` interface.
  Dialled dial(const std::string& address, const NetworkInterface& from, int peer, int index, int nsocks,
               Deadline deadline);
  // The weights of each multi-rail pair's rails, measured in rank order (a deadlock-free order: every rank meets
  // its pairs in the same lexicographic order of (lower, higher)).
  // By peer, per rail of the pair: this rank's rail (an index into rails_) and the peer's end of it.
  using PairRails = std::map<int, std::vector<std::pair<size_t, TcpRail>>>;
  std::map<int, RailPlan> planRails(std::map<int, std::vector<int>>& fds, const std::map<int, int>& perRail,
                                    const PairRails& railsOf, Deadline deadline);
  // The record keys of an authenticated socket, this end being `role`.
  static TcpLinkKeys linkKeys(const ChannelHandshake& handshake, ChannelRole role);

  int rank_;
  std::string jobKey_;
  std::string secret_;
  bool encrypt_ = false;
  int nsocks_;
  std::string ifnameSpec_;
  std::string cardPrefix_ = "tcp";
  size_t maxRails_ = kMaxRails;
  int family_ = AF_UNSPEC;
  size_t defaultWidth_ = 0;
  std::vector<NetworkInterface> rails_;  // chosen when the card is written
  asio::io_context io_;
  std::vector<asio::ip::tcp::acceptor> acceptors_;  // one per rail
};

}  // namespace chorus
