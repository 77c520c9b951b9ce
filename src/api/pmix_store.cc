#include "src/api/pmix_store.h"

#include <mutex>
#include <optional>

#include "core/bootstrap/pmix_exchange.h"
#include "core/comm_config.h"
#include "core/error.h"
#include "core/params.h"
#include "topology/network_interfaces.h"

namespace chorus {
namespace {

// The keys rank 0 puts. An empty secret: every rank has CHORUS_SECRET.
constexpr const char* kHostKey = "chorus.store.host";
constexpr const char* kPortKey = "chorus.store.port";
constexpr const char* kSecretKey = "chorus.secret";

struct PmixLaunch {
  PmixJob job;
  std::string host;
  uint16_t port = 0;
  std::string jobId;
  std::string secret;
  std::shared_ptr<StoreServer> server;  // rank 0's, kept for the later communicators of the process
};

std::mutex launchMutex;
std::optional<PmixLaunch> launched;

// The same on every rank: CHORUS_JOB_ID, else the PMIx namespace (one per job of the launcher).
std::string jobIdOf(const PmixJob& job) {
  const std::string named = params::jobId();
  return named.empty() ? "pmix-" + job.nspace : named;
}

PmixLaunch exchangeThroughPmix(const LaunchSpec& spec, double timeoutSeconds) {
  PmixLaunch l;
  const bool storeNamed = !spec.storeThroughPmix;
  auto publish = [&](const PmixJob& job) {
    PmixValues values;
    if (storeNamed) return values;  // CHORUS_STORE or MASTER_ADDR: PMIx only says the rank and size
    const std::string secret = params::secret().empty() ? randomHex(16) : std::string();
    // The wildcard of the chosen address's family: on an IPv6-only host there is no 0.0.0.0 to reach.
    const NetworkInterface nic = chooseNetworkInterface(params::socketIfname(), env_config::socketFamily());
    l.server = std::make_shared<StoreServer>(familyOf(nic) == AF_INET6 ? "::" : "0.0.0.0", 0, jobIdOf(job),
                                             secret.empty() ? params::secret() : secret);
    values[kHostKey] = nic.address;
    values[kPortKey] = std::to_string(l.server->port());
    values[kSecretKey] = secret;
    return values;
  };
  const std::vector<std::string> keys =
      storeNamed ? std::vector<std::string>{} : std::vector<std::string>{kHostKey, kPortKey, kSecretKey};
  const PmixValues values = shareFromRankZero(keys, publish, timeoutSeconds, &l.job);
  l.jobId = jobIdOf(l.job);
  if (!storeNamed) {
    l.host = values.at(kHostKey);
    l.port = static_cast<uint16_t>(params::asInt("the store port PMIx carried", values.at(kPortKey), 1, 65535));
    l.secret = values.at(kSecretKey).empty() ? params::secret() : values.at(kSecretKey);
  }
  return l;
}

}  // namespace

std::shared_ptr<StoreServer> completeThroughPmix(LaunchSpec* spec, double timeoutSeconds) {
  std::lock_guard<std::mutex> g(launchMutex);
  if (!launched) launched = exchangeThroughPmix(*spec, timeoutSeconds);
  const PmixLaunch& l = *launched;
  if (spec->nranks == 0) {
    spec->rank = l.job.rank;
    spec->nranks = l.job.size;
  } else if (spec->rank != l.job.rank || spec->nranks != l.job.size) {
    throw Error(chorusInvalidUsage, errorContext(spec->rank, "chorusCommInitFromEnv") + ": " + spec->source +
                                        " says rank " + std::to_string(spec->rank) + " of " +
                                        std::to_string(spec->nranks) + " but PMIx says rank " +
                                        std::to_string(l.job.rank) + " of " + std::to_string(l.job.size));
  }
  if (!spec->storeThroughPmix) {
    // The store was named: only the rank came from PMIx, so whether this rank serves it is decided now.
    spec->serveStore = spec->rank == 0 && params::storeServed() != "1";
    return nullptr;
  }
  spec->storeHost = l.host;
  spec->storePort = l.port;
  spec->secret = l.secret;
  spec->jobId = l.jobId;  // the one rank 0's server was made with
  return l.server;
}

}  // namespace chorus
