#include <algorithm>
#include <sstream>

#include "src/core/error.h"
#include "src/core/params.h"
#include "transports/shm/shm_transport.h"
#include "transports/tcp/tcp_transport.h"
#include "transports/transport.h"

namespace chorus {

std::vector<std::unique_ptr<Transport>> makeTransports(int rank, const std::string& restriction,
                                                       const std::string& jobKey, const std::string& secret) {
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
        throwInvalidArgument("CHORUS_TRANSPORT=" + restriction + ": unknown transport '" + name + "' (known: " + all +
                             ")");
      }
      chosen.push_back(name);
    }
  }
  std::vector<std::unique_ptr<Transport>> out;
  for (const auto& name : chosen) {
    if (name == "shm") {
      size_t ring = static_cast<size_t>(params::asBytes("CHORUS_SHM_BUFFER", params::shmBuffer(), 64 << 10, 64 << 20));
      // 0: never; 1: where it beats the ring on this machine (measured once per process); 2: wherever permitted.
      const ShmCma cma[] = {ShmCma::kOff, ShmCma::kWhenFaster, ShmCma::kAlways};
      auto shm = std::make_unique<ShmTransport>(rank, jobKey, ring,
                                                cma[params::asInt("CHORUS_SHM_CMA", params::shmCma(), 0, 2)]);
      shm->requireSecret(secret);
      out.push_back(std::move(shm));
    } else if (name == "tcp") {
      int nsocks = static_cast<int>(params::asInt("CHORUS_NSOCKS", params::nsocks(), 1, 16));
      out.push_back(std::make_unique<TcpTransport>(rank, jobKey, nsocks, params::socketIfname(), secret));
    }
  }
  if (out.empty()) throwInvalidArgument("CHORUS_TRANSPORT=" + restriction + " leaves no transport");
  return out;
}

}  // namespace chorus
