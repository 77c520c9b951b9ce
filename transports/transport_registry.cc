#include <algorithm>
#include <sstream>

#include "src/core/error.h"
#include "src/core/comm_config.h"
#include "transports/shm/shm_transport.h"
#include "transports/tcp/tcp_transport.h"
#include "transports/transport.h"

namespace chorus {

std::vector<std::unique_ptr<Transport>> makeTransports(int rank, const CommConfig& config, const std::string& jobKey,
                                                       const std::string& secret) {
  const std::string& restriction = config.transports;
  // Probe order: the fastest link first. Later transports (cuda_ipc, ibverbs) slot in before tcp.
  const std::vector<std::string> known = {"shm", "tcp"};
  std::vector<std::string> chosen;
  if (restriction.empty()) {
    chosen = known;
  } else {
    std::stringstream ss(restriction);
    std::string name;
    while (std::getline(ss, name, ',')) {
      if (name.empty()) continue;
      if (std::find(known.begin(), known.end(), name) == known.end()) {
        std::string all;
        for (const auto& k : known) all += (all.empty() ? "" : ", ") + k;
        throwInvalidArgument("transports '" + restriction + "' (CHORUS_TRANSPORT or chorusConfig_t.transports): unknown " +
                             "transport '" + name + "' (known: " + all + ")");
      }
      chosen.push_back(name);
    }
  }
  std::vector<std::unique_ptr<Transport>> out;
  for (const auto& name : chosen) {
    if (name == "shm") {
      // 0: never; 1: where it beats the ring on this machine (measured once per process); 2: wherever permitted.
      const ShmCma cma[] = {ShmCma::kOff, ShmCma::kWhenFaster, ShmCma::kAlways};
      auto shm = std::make_unique<ShmTransport>(rank, jobKey, config.shmBufferBytes, cma[config.shmCma]);
      shm->requireSecret(secret);
      out.push_back(std::move(shm));
    } else if (name == "tcp") {
      out.push_back(
          std::make_unique<TcpTransport>(rank, jobKey, config.socketsPerPeer, config.socketIfname, secret));
    }
  }
  if (out.empty()) throwInvalidArgument("transports '" + restriction + "' (CHORUS_TRANSPORT or chorusConfig_t.transports) leaves no transport");
  return out;
}

}  // namespace chorus
