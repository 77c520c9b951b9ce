// A communicator's peers: the rendezvous through the store (every rank's card), a connection to each peer over the
// first transport both ends can use, and what the cards tell of where each peer runs. A split child may share its
// parent's connections (transports/family_connection.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/bootstrap/launch_spec.h"
#include "core/bootstrap/peer_card.h"
#include "core/bootstrap/store.h"
#include "core/comm_config.h"
#include "core/deadline.h"
#include "src/comm/call_order.h"
#include "transports/connection.h"
#include "transports/transport_registry.h"

namespace chorus {

class PeerConnections {
 public:
  PeerConnections() = default;

  // Rendezvous through spec's store (served here when spec.serveStore, else kept alive through `server`, which may
  // be null), then a connection to every peer; bounded by the deadline.
  static PeerConnections connect(const LaunchSpec& spec, const CommConfig& config,
                                 std::shared_ptr<StoreServer> server, Deadline deadline);
  // A split child's (rank spec.rank of the parent's `members`, in the child's rank order): the parent's store,
  // cards and connections, shared; the parent's call lock (`order`'s) is held while they change hands.
  static PeerConnections share(PeerConnections& parent, const std::vector<int>& members, const LaunchSpec& spec,
                               CallOrder& order, Deadline deadline);

  int rank() const { return rank_; }
  int size() const { return size_; }
  StoreClient& store() const { return *store_; }
  const std::shared_ptr<StoreServer>& storeServer() const { return storeServer_; }
  const std::vector<PeerCard>& cards() const { return cards_; }  // every rank's (this one's included)
  std::vector<std::unique_ptr<Connection>>& conns() { return conns_; }  // [p]: to rank p, null for self
  const std::vector<std::unique_ptr<Connection>>& conns() const { return conns_; }
  const std::vector<TransportId>& transports() const { return transports_; }  // [p]: the transport of conns()[p]
  // Ranks of one host talk over the network (a transport list without shm): the same answer on every rank.
  bool sameHostOverNetwork() const { return sameHostMedium_ == TransportMedium::kNetwork; }
  const std::vector<bool>& sameMachine() const { return sameMachine_; }  // [p]: CUDA IPC can reach rank p
  int localRanks() const { return localRanks_; }  // ranks on this machine, this one included
  // The most sockets per rail any pair can stripe over (1 without striping).
  int maxStripeWidth() const;
  // The transports in use, distinct, in the order of the ranks they first reach ("shm,tcp"); "" for a world of one.
  std::string transportsInUse() const;
  // [p]: the name of the transport to rank p ("" for self), for the trace.
  std::vector<const char*> transportNames() const;
  // chorusCommRegister: [p, p+bytes) registered with every connection that keeps regions for what it sends (ib),
  // until deregisterBuffer(handle); the handle is never null. No call may run meanwhile.
  void* registerBuffer(const void* p, size_t bytes);
  void deregisterBuffer(void* handle);

  // The physical machine a rank runs on (emulated hosts of one machine share it: its cores and its clock).
  static std::string machineOf(const PeerCard& c);

 private:
  // What carries bytes between ranks of one host, the same answer on every rank (a rank alone on its host must not
  // plan with other costs than the rest: the ranks would choose different algorithms and wait on each other): the
  // transport of the first two ranks of each host with several, network if any of those is.
  static TransportMedium sameHostMedium(const std::vector<PeerCard>& cards,
                                        const std::vector<ChosenTransport>& transports);

  int rank_ = 0, size_ = 0;
  std::shared_ptr<StoreServer> storeServer_;  // kept alive while a communicator of the family uses the store
  std::shared_ptr<StoreClient> store_;         // shared with the children that share these connections
  std::vector<PeerCard> cards_;
  std::vector<std::unique_ptr<Connection>> conns_;
  std::vector<TransportId> transports_;
  TransportMedium sameHostMedium_ = TransportMedium::kSharedMemory;
  std::vector<bool> sameMachine_;
  int localRanks_ = 1;  // more than the cores means no spinning
};

}  // namespace chorus
