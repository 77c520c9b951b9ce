#include "src/comm/peer_connections.h"

#include <unistd.h>

#include <algorithm>
#include <map>

#include "core/error.h"
#include "core/logging.h"
#include "src/comm/shrink_agreement.h"
#include "topology/host_identity.h"
#include "topology/local_host.h"
#include "topology/rank_placement.h"
#include "transports/family_connection.h"

namespace chorus {

std::string PeerConnections::machineOf(const PeerCard& c) {
  auto it = c.entries.find("machine");
  return it == c.entries.end() ? c.hostId : it->second;
}

PeerConnections PeerConnections::connect(const LaunchSpec& spec, const CommConfig& config,
                                         std::shared_ptr<StoreServer> server, Deadline deadline) {
  PeerConnections pc;
  const int rank = pc.rank_ = spec.rank;
  const int size = pc.size_ = spec.nranks;
  const std::string who = errorContext(rank, "connect (" + std::to_string(size) + " ranks)");
  // The secret comes from CHORUS_SECRET or the unique id (launch_spec.h): the store and every connection check it.
  // On every address of the store host's family: an IPv6 store address (CHORUS_STORE=[fd00::1]:port) is not
  // reached through 0.0.0.0.
  const char* wildcard = spec.storeHost.find(':') != std::string::npos ? "::" : "0.0.0.0";
  pc.storeServer_ = spec.serveStore ? std::make_shared<StoreServer>(wildcard, spec.storePort, spec.jobId, spec.secret)
                                    : std::move(server);
  pc.store_ = std::make_shared<StoreClient>(spec.storeHost, spec.storePort, spec.jobId, spec.secret, rank, deadline);
  const std::string& pre = spec.keyPrefix;
  auto transports = makeTransports(rank, config, spec.jobId + "/" + pre, spec.secret);

  PeerCard self;
  self.rank = rank;
  self.pid = static_cast<int>(getpid());
  self.hostId = hostIdentity();
  self.entries["machine"] = machineIdentity();
  addPlacement(self, localHostTopology());
  for (auto& t : transports) t.transport->describeSelf(self);
  // The network's link class follows the transport that carries it, not whether hwloc saw an RDMA NIC.
  self.entries["topo.rdma"] = networkIsRdma(self) ? "1" : "0";
  if (!config.traceDir.empty()) self.entries["trace"] = "1";  // its clock's offset to rank 0's is wanted
  // Owned: the card stays in the store while this process lives, which is how a shrink tells the dead
  // (shrink_agreement.h).
  pc.store_->setOwned(cardKey(pre, rank), self.encode(), deadline);
  std::vector<PeerCard>& cards = pc.cards_;
  cards.resize(size);
  cards[rank] = self;
  for (int p = 0; p < size; ++p) {
    if (p != rank) cards[p] = PeerCard::decode(pc.store_->get(cardKey(pre, p), deadline), p);
  }
  // Ranks sharing this machine's cores: emulated hosts (CHORUS_HOST_ID) on one machine share them too.
  pc.localRanks_ = static_cast<int>(
      std::count_if(cards.begin(), cards.end(), [&](const PeerCard& c) { return machineOf(c) == machineOf(self); }));
  pc.sameMachine_.assign(size, false);
  for (int p = 0; p < size; ++p) pc.sameMachine_[p] = machineOf(cards[p]) == machineOf(self);
  // Each pair takes the first transport in probe order that both ends can use.
  std::vector<std::vector<PeerCard>> groups(transports.size());
  pc.transports_.assign(size, TransportId::kShm);
  for (int p = 0; p < size; ++p) {
    if (p == rank) continue;
    size_t chosen = transports.size();
    for (size_t t = 0; t < transports.size() && chosen == transports.size(); ++t) {
      if (transports[t].transport->canConnect(self, cards[p])) chosen = t;
    }
    if (chosen == transports.size()) {
      throw Error(chorusInvalidUsage, who + ": no transport can reach rank " + std::to_string(p) +
                                          " (transports '" + config.transports + "')");
    }
    groups[chosen].push_back(cards[p]);
    pc.transports_[p] = transports[chosen].record->id;
  }
  pc.sameHostMedium_ = sameHostMedium(cards, transports);
  pc.conns_.resize(size);
  // In probe order on every rank: each transport's connectAll waits for its peers to be inside the same one.
  for (size_t t = 0; t < transports.size(); ++t) {
    if (groups[t].empty()) continue;
    for (auto& c : transports[t].transport->connectAll(self, groups[t], deadline)) {
      CHORUS_INFO(rank, "peer " << c->peer() << " via " << c->describe());
      int p = c->peer();
      pc.conns_[p] = std::move(c);
    }
  }
  // Everyone has read every card before anyone may tear the store down (rank 0 serves it in env mode).
  pc.store_->barrier(pre + "ready", size, deadline);
  return pc;
}

PeerConnections PeerConnections::share(PeerConnections& parent, const std::vector<int>& members, const LaunchSpec& spec,
                                       CallOrder& order, Deadline deadline) {
  PeerConnections pc;
  pc.rank_ = spec.rank;
  const int size = pc.size_ = spec.nranks;
  pc.storeServer_ = parent.storeServer_;
  pc.store_ = parent.store_;
  // No card to trade (the parent's serve), but one kept while this process lives, for a shrink of this child.
  pc.store_->setOwned(cardKey(spec.keyPrefix, pc.rank_), {}, deadline);
  {
    // The parent's connections become shared: no call may be using them meanwhile.
    CallLocked locked(order);
    pc.conns_.resize(size);
    pc.transports_.assign(size, TransportId::kShm);
    pc.sameMachine_.assign(size, false);
    for (int q = 0; q < size; ++q) {
      const int p = members[q];
      pc.sameMachine_[q] = parent.sameMachine_[p];
      if (q == pc.rank_) continue;
      pc.conns_[q] = std::make_unique<FamilyConnection>(FamilyConnection::share(parent.conns_[p]));
      pc.transports_[q] = parent.transports_[p];
    }
    pc.sameHostMedium_ = parent.sameHostMedium_;
  }
  pc.localRanks_ = static_cast<int>(std::count(pc.sameMachine_.begin(), pc.sameMachine_.end(), true));
  for (int q = 0; q < size; ++q) {
    PeerCard card = parent.cards_[members[q]];
    card.rank = q;
    pc.cards_.push_back(std::move(card));
  }
  return pc;
}

TransportMedium PeerConnections::sameHostMedium(const std::vector<PeerCard>& cards,
                                                const std::vector<ChosenTransport>& transports) {
  std::map<std::string, int> firstOfHost;
  for (const PeerCard& c : cards) {
    auto [it, isFirst] = firstOfHost.emplace(c.hostId, c.rank);
    if (isFirst || it->second < 0) continue;
    const PeerCard& a = cards[static_cast<size_t>(it->second)];
    it->second = -1;  // one pair per host
    for (const ChosenTransport& t : transports) {
      if (t.transport->canConnect(a, c)) {
        if (t.record->medium == TransportMedium::kNetwork) return TransportMedium::kNetwork;
        break;
      }
    }
  }
  return TransportMedium::kSharedMemory;
}

int PeerConnections::maxStripeWidth() const {
  int width = 1;
  for (const auto& c : conns_) {
    const StripedSends* striping = c ? c->capabilities().striping : nullptr;
    if (striping != nullptr) width = std::max(width, static_cast<int>(striping->maxStripeWidth()));
  }
  return width;
}

std::string PeerConnections::transportsInUse() const {
  std::string names;
  for (int p = 0; p < size_; ++p) {
    if (p == rank_ || !conns_[p]) continue;
    const std::string name = transportRecord(transports_[p]).name;
    if (("," + names + ",").find("," + name + ",") == std::string::npos) names += (names.empty() ? "" : ",") + name;
  }
  return names;
}

std::vector<const char*> PeerConnections::transportNames() const {
  std::vector<const char*> names(size_, "");
  for (int p = 0; p < size_; ++p) {
    if (p != rank_ && conns_[p]) names[p] = transportRecord(transports_[p]).name;
  }
  return names;
}

namespace {
// What chorusCommRegister hands out: each registering connection's token for the range.
struct BufferRegistration {
  std::vector<std::pair<MemoryRegistration*, void*>> tokens;
};
}  // namespace

void* PeerConnections::registerBuffer(const void* p, size_t bytes) {
  auto reg = std::make_unique<BufferRegistration>();
  try {
    for (auto& c : conns_) {
      MemoryRegistration* registration = c ? c->capabilities().registration : nullptr;
      if (registration == nullptr) continue;
      if (void* token = registration->registerMemory(p, bytes)) reg->tokens.emplace_back(registration, token);
    }
  } catch (...) {
    for (auto& [registration, token] : reg->tokens) registration->deregisterMemory(token);
    throw;
  }
  return reg.release();
}

void PeerConnections::deregisterBuffer(void* handle) {
  std::unique_ptr<BufferRegistration> reg(static_cast<BufferRegistration*>(handle));
  for (auto& [registration, token] : reg->tokens) registration->deregisterMemory(token);
}

}  // namespace chorus
