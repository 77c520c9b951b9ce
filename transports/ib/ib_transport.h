// The RDMA verbs transport: ranks whose cards show ports on the same fabric (RoCE, or one InfiniBand subnet)
// connect with reliable-connected queue pairs (ib_connection.h). Each pair also keeps a TCP connection, made by an
// inner TcpTransport under the card prefix "ib.oob": it carries the queue pairs' addresses at setup and, later,
// goodbyes, abandon notes and hang-ups. Where no library, device or active port is there, the transport says why
// once at INFO and publishes nothing (other transports carry the pairs), unless CHORUS_TRANSPORT names ib: then
// init fails at once with that reason.
#pragma once

#include <memory>
#include <string>

#include "transports/ib/ib_connection.h"
#include "transports/ib/ib_device.h"
#include "transports/tcp/tcp_transport.h"
#include "transports/transport.h"

namespace chorus {

struct IbTransportSettings {
  bool emulation = false;  // CHORUS_IB_EMULATION: the software verbs device
  bool disabled = false;   // CHORUS_IB_DISABLE
  bool required = false;   // CHORUS_TRANSPORT names ib: unavailability is an error
  std::string hcaSpec;     // CHORUS_IB_HCA
  int gidIndex = -1;       // CHORUS_IB_GID_INDEX
  std::string ifnameSpec;  // CHORUS_SOCKET_IFNAME
  int socketFamily = 0;    // CHORUS_SOCKET_FAMILY (AF_UNSPEC: either)
  IbQpSettings qp;
};

class IbTransport final : public Transport {
 public:
  IbTransport(int rank, const std::string& jobKey, const std::string& secret, IbTransportSettings settings);
  // True when the card shows an RDMA port of real hardware (not the software device) that ib will use.
  static bool cardShowsRdmaPort(const PeerCard& card);
  void describeSelf(PeerCard& card) override;
  bool canConnect(const PeerCard& self, const PeerCard& peer) const override;
  std::vector<std::unique_ptr<Connection>> connectAll(const PeerCard& self, const std::vector<PeerCard>& peers,
                                                      Deadline deadline) override;

 private:
  int rank_;
  IbTransportSettings settings_;
  TcpTransport oob_;
  std::shared_ptr<IbDevice> device_;
};

}  // namespace chorus
