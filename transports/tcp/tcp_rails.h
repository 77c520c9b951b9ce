// A TCP peer pair over several network interfaces (rails; CHORUS_SOCKET_IFNAME naming two or more, or several of
// one kind up by default): how a rank publishes its rails on its card, how two ranks pair them, and how the pair's
// sockets sit on them. Rail r of one rank pairs with rail r of the other; a pair has as many rails as the rank with
// fewer, each with the pair's sockets per rail, rail-major (rail r holds sockets [r * perRail, (r + 1) * perRail)).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/bootstrap/peer_card.h"
#include "transports/tcp/stripe_cuts.h"

namespace chorus {

struct TcpRail {
  std::string ifname;   // "eth1"
  std::string address;  // where it listens: "10.78.0.1:4000", "[fd00::1]:4000"
};

// The card entry that lists a rank's rails ("<prefix>.rails": "eth0=host:port eth1=host:port"); a card without it
// has one rail, at "<prefix>.addr", its interface unnamed.
std::string encodeRails(const std::vector<TcpRail>& rails);
// The rails of a peer's card; throws chorusRemoteError naming the peer when its entry is malformed.
std::vector<TcpRail> cardRails(const PeerCard& card, const std::string& prefix, int selfRank);

// Which rails two ranks pair, given each one's interface names in its own order: [lower's index, higher's index]
// per rail of the pair, in the lower rank's order. Rails of one name pair up (eth1 with eth1, whatever the
// order or number each host has up); ranks that share no name pair by position, as many as the one with fewer.
std::vector<std::pair<size_t, size_t>> pairRails(const std::vector<std::string>& lower,
                                                 const std::vector<std::string>& higher);

// One pair's rails as this end uses them: its own interface on each, each rail's share of a striped message
// (measured by the rail probe, tcp_rail_probe.h; alike on both ends), and the sockets per rail.
struct RailPlan {
  std::vector<std::string> interfaces;  // this end's, one per rail ("" where unnamed)
  std::vector<uint32_t> weights;        // one per rail; empty: all alike
  size_t perRail = 1;
  size_t defaultWidth = 0;  // the sockets per rail a message stripes over unless a call says (0: all of them)

  size_t rails() const { return interfaces.empty() ? 1 : interfaces.size(); }
  // Whether the plan's weighted rails account for all of a connection's `sockets`.
  bool weighs(size_t sockets) const { return !weights.empty() && sockets == weights.size() * perRail; }
  // The sockets each rail holds among them: perRail where the plan weighs them, else all on the one rail.
  size_t socketsPerRail(size_t sockets) const { return weighs(sockets) ? perRail : sockets; }
  // The cuts over every socket of the pair when messages stripe over the first `width` sockets of each rail (0:
  // all): a rail's weight shared by those sockets, the others idle.
  StripeCuts cuts(size_t sockets, size_t width = 0) const;
  // The rail socket `i` sits on.
  size_t railOf(size_t socket) const { return socket / perRail; }
  // " over eth0 (512/1024), eth1 (512/1024)" for a connection's description; "" for one rail.
  std::string describe() const;
};

}  // namespace chorus
