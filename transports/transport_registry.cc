#include "transports/transport_registry.h"

#include <algorithm>
#include <sstream>

#include "core/comm_config.h"
#include "core/error.h"
#include "transports/shm/shm_transport.h"
#include "transports/tcp/tcp_transport.h"
#ifdef CHORUS_HAVE_VERBS
#include "transports/ib/ib_transport.h"
#endif

namespace chorus {
namespace {

std::unique_ptr<Transport> makeShm(int rank, const CommConfig& config, const std::string& jobKey,
                                   const std::string& secret) {
  // 0: never; 1: where it beats the ring on this machine (measured once per process); 2: wherever permitted.
  const ShmCma cma[] = {ShmCma::kOff, ShmCma::kWhenFaster, ShmCma::kAlways};
  auto shm = std::make_unique<ShmTransport>(rank, jobKey, config.shmBufferBytes, cma[config.shmCma]);
  shm->requireSecret(secret);
  return shm;
}

std::unique_ptr<Transport> makeTcp(int rank, const CommConfig& config, const std::string& jobKey,
                                   const std::string& secret) {
  // With the autotuner on, each pair opens kTunedSockets per rail (or CHORUS_NSOCKS if more) and stripes over
  // CHORUS_NSOCKS of them until the tuner finds that another number does better for a size.
  const int open =
      config.autotune ? std::max(config.socketsPerPeer, TcpTransport::kTunedSockets) : config.socketsPerPeer;
  auto tcp = std::make_unique<TcpTransport>(rank, jobKey, open, config.socketIfname, secret);
  tcp->setDefaultStripeWidth(config.socketsPerPeer);
  tcp->setSocketFamily(config.socketFamily);
  if (config.encrypt) tcp->requireEncryption();
  return tcp;
}

#ifdef CHORUS_HAVE_VERBS
std::unique_ptr<Transport> makeIb(int rank, const CommConfig& config, const std::string& jobKey,
                                  const std::string& secret) {
  IbTransportSettings s;
  s.emulation = config.ibEmulation;
  s.disabled = config.ibDisable;
  // Named in the restriction: then an unavailable ib is an error at init, not a silent fallback.
  std::string list = "," + config.transports + ",";
  s.required = list.find(",ib,") != std::string::npos;
  s.hcaSpec = config.ibHca;
  s.gidIndex = config.ibGidIndex;
  s.ifnameSpec = config.socketIfname;
  s.socketFamily = config.socketFamily;
  s.qp.lanes = config.ibQpsPerPeer;
  s.qp.timeout = config.ibTimeout;
  s.qp.retryCnt = config.ibRetryCnt;
  return std::make_unique<IbTransport>(rank, jobKey, secret, s);
}
#endif

std::string knownNames() {
  std::string all;
  for (const TransportRecord& r : transportRegistry()) all += (all.empty() ? "" : ", ") + std::string(r.name);
  return all;
}

}  // namespace

const std::vector<TransportRecord>& transportRegistry() {
  // Probe order: the fastest link first.
  static const std::vector<TransportRecord> records = {
      {TransportId::kShm, "shm", TransportMedium::kSharedMemory, makeShm},
#ifdef CHORUS_HAVE_VERBS
      {TransportId::kIb, "ib", TransportMedium::kNetwork, makeIb},
#endif
      {TransportId::kTcp, "tcp", TransportMedium::kNetwork, makeTcp},
  };
  return records;
}

bool networkIsRdma(const PeerCard& card) {
#ifdef CHORUS_HAVE_VERBS
  return IbTransport::cardShowsRdmaPort(card);
#else
  (void)card;
  return false;
#endif
}

const TransportRecord& transportRecord(TransportId id) {
  for (const TransportRecord& r : transportRegistry()) {
    if (r.id == id) return r;
  }
  throwInternal("no transport record for id " + std::to_string(static_cast<int>(id)));
}

std::vector<ChosenTransport> makeTransports(int rank, const CommConfig& config, const std::string& jobKey,
                                            const std::string& secret) {
  const std::string& restriction = config.transports;
  std::vector<const TransportRecord*> chosen;
  if (restriction.empty()) {
    for (const TransportRecord& r : transportRegistry()) chosen.push_back(&r);
  } else {
    std::stringstream ss(restriction);
    std::string name;
    while (std::getline(ss, name, ',')) {
      if (name.empty()) continue;
      const auto& all = transportRegistry();
      auto it = std::find_if(all.begin(), all.end(), [&](const TransportRecord& r) { return name == r.name; });
      if (it == all.end()) {
        throwInvalidArgument("transports '" + restriction + "' (CHORUS_TRANSPORT or chorusConfig_t.transports): " +
                             "unknown transport '" + name + "' (known: " + knownNames() + ")");
      }
      chosen.push_back(&*it);
    }
  }
  if (chosen.empty()) {
    throwInvalidArgument("transports '" + restriction +
                         "' (CHORUS_TRANSPORT or chorusConfig_t.transports) leaves no transport");
  }
  std::vector<ChosenTransport> out;
  for (const TransportRecord* r : chosen) out.push_back(ChosenTransport{r, r->make(rank, config, jobKey, secret)});
  return out;
}

}  // namespace chorus
