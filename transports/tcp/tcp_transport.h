// The TCP transport: every pair can use it; lower rank connects to higher, CHORUS_NSOCKS sockets per pair.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <string>

#include "transports/transport.h"

namespace chorus {

class TcpTransport final : public Transport {
 public:
  // jobKey keeps connections of other jobs or communicators out; nsocks sockets per peer (1..16).
  TcpTransport(int rank, std::string jobKey, int nsocks, std::string ifnameSpec);
  std::string_view name() const override { return "tcp"; }
  void describeSelf(PeerCard& card) override;
  bool canConnect(const PeerCard& self, const PeerCard& peer) const override;
  std::vector<std::unique_ptr<Connection>> connectAll(const PeerCard& self, const std::vector<PeerCard>& peers,
                                                       Deadline deadline) override;

 private:
  boost::asio::ip::tcp::socket dial(const std::string& address, int peer, int index, int nsocks, Deadline deadline);

  int rank_;
  std::string jobKey_;
  int nsocks_;
  std::string ifnameSpec_;
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
};

// Splits "host:port" or "[v6]:port"; throws chorusInvalidArgument naming `what` on a malformed string.
void splitHostPort(const std::string& s, const std::string& what, std::string* host, uint16_t* port);

}  // namespace chorus
