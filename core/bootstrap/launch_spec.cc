#include "core/bootstrap/launch_spec.h"

#include <sys/random.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/bootstrap/pmix_exchange.h"
#include "core/error.h"
#include "core/host_port.h"
#include "core/params.h"

namespace chorus {

namespace {

constexpr char kIdMagic[8] = {'C', 'H', 'O', 'R', 'U', 'S', 'I', '2'};
constexpr uint8_t kIdHasSecret = 1;
constexpr size_t kIdSecretBytes = kUniqueIdSecretHexChars / 2;

// The id layout (see launch_spec.h).
struct IdLayout {
  char magic[8];
  uint8_t flags;
  uint8_t secret[kIdSecretBytes];
  char text[103];
};
static_assert(sizeof(IdLayout) == sizeof(chorusUniqueId));

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

std::string hexOf(const uint8_t* bytes, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out += digits[bytes[i] >> 4];
    out += digits[bytes[i] & 15];
  }
  return out;
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

int parseInt(const std::string& name, const std::string& v, int lo) {
  return static_cast<int>(params::asInt(name.c_str(), v, lo, 1 << 24));
}

}  // namespace

std::string randomHex(size_t nbytes) {
  std::string raw(nbytes, '\0');
  size_t got = 0;
  while (got < nbytes) {
    ssize_t r = getrandom(raw.data() + got, nbytes - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throwSystemError("making a random job id", "getrandom", errno);
    got += static_cast<size_t>(r);
  }
  return hexOf(reinterpret_cast<const uint8_t*>(raw.data()), raw.size());
}

std::string newUniqueIdSecret() { return params::secret().empty() ? randomHex(kIdSecretBytes) : std::string(); }

chorusUniqueId encodeUniqueId(const std::string& host, uint16_t port, const std::string& jobId,
                              const std::string& commId) {
  return encodeUniqueId(host, port, jobId, commId, "");
}

chorusUniqueId encodeUniqueId(const std::string& host, uint16_t port, const std::string& jobId,
                              const std::string& commId, const std::string& carriedSecret) {
  IdLayout l{};
  std::memcpy(l.magic, kIdMagic, sizeof(kIdMagic));
  if (!carriedSecret.empty()) {
    if (carriedSecret.size() != kUniqueIdSecretHexChars) {
      throwInvalidArgument("a unique id carries a secret of exactly " + std::to_string(kUniqueIdSecretHexChars) +
                           " hex characters, not " + std::to_string(carriedSecret.size()));
    }
    for (size_t i = 0; i < kIdSecretBytes; ++i) {
      int hi = hexValue(carriedSecret[2 * i]), lo = hexValue(carriedSecret[2 * i + 1]);
      if (hi < 0 || lo < 0) throwInvalidArgument("a unique id's secret must be lowercase hex");
      l.secret[i] = static_cast<uint8_t>(hi * 16 + lo);
    }
    l.flags = kIdHasSecret;
  }
  std::string text;
  for (const std::string& part : {host, std::to_string(port), jobId, commId}) {
    if (part.find('\0') != std::string::npos) throwInvalidArgument("a unique id field contains a NUL byte");
    text.append(part);
    text.push_back('\0');
  }
  if (text.size() >= sizeof(l.text)) {
    throwInvalidArgument("store host, job and comm ids too long for a unique id (" + std::to_string(text.size()) +
                         " bytes, at most " + std::to_string(sizeof(l.text) - 1) + "): host " + host);
  }
  std::memcpy(l.text, text.data(), text.size());
  chorusUniqueId id;
  std::memcpy(&id, &l, sizeof(id));
  return id;
}

LaunchSpec decodeUniqueId(const chorusUniqueId& id, int rank, int nranks) {
  IdLayout l;
  std::memcpy(&l, &id, sizeof(l));
  if (std::memcmp(l.magic, kIdMagic, sizeof(kIdMagic)) != 0 || l.text[sizeof(l.text) - 1] != '\0') {
    throwInvalidArgument("the unique id was not made by chorusGetUniqueId of this Chorus version (bad magic)");
  }
  if ((l.flags & ~kIdHasSecret) != 0) throwInvalidArgument("the unique id has unknown flags");
  std::string parts[4];
  size_t pos = 0;
  for (auto& p : parts) {
    if (pos >= sizeof(l.text)) throwInvalidArgument("the unique id is truncated");
    p = std::string(l.text + pos);
    pos += p.size() + 1;
  }
  LaunchSpec s;
  s.rank = rank;
  s.nranks = nranks;
  s.storeHost = parts[0];
  s.storePort = static_cast<uint16_t>(params::asInt("unique id port", parts[1], 1, 65535));
  s.jobId = parts[2];
  s.keyPrefix = "u" + parts[3] + "/";
  s.source = "unique id";
  s.secret = (l.flags & kIdHasSecret) ? hexOf(l.secret, kIdSecretBytes) : params::secret();
  if (s.storeHost.empty() || s.jobId.empty()) throwInvalidArgument("the unique id has an empty store host or job id");
  return s;
}

LaunchSpec launchSpecFromEnv() {
  LaunchSpec s;
  std::string rank, size, store;
  if (!env("CHORUS_RANK").empty() || !env("CHORUS_WORLD_SIZE").empty()) {
    rank = params::rank();
    size = params::worldSize();
    s.source = "CHORUS_RANK/CHORUS_WORLD_SIZE";
  } else if (!env("RANK").empty() && !env("WORLD_SIZE").empty()) {
    rank = env("RANK");
    size = env("WORLD_SIZE");
    s.source = "torchrun RANK/WORLD_SIZE";
  } else if (!env("OMPI_COMM_WORLD_RANK").empty()) {
    rank = env("OMPI_COMM_WORLD_RANK");
    size = env("OMPI_COMM_WORLD_SIZE");
    s.source = "Open MPI OMPI_COMM_WORLD_RANK/SIZE";
  } else if (!env("SLURM_PROCID").empty()) {
    rank = env("SLURM_PROCID");
    size = env("SLURM_NTASKS");
    s.source = "Slurm SLURM_PROCID/SLURM_NTASKS";
  } else if (pmixLaunched()) {
    s.source = "PMIx";  // the rank and size too come through PMIx (nranks 0 until then)
  } else {
    throwInvalidArgument(
        "chorusCommInitFromEnv: no launch variables found (set CHORUS_RANK, CHORUS_WORLD_SIZE and "
        "CHORUS_STORE, or run under chorusrun, torchrun, mpirun, srun or another PMIx launcher)");
  }
  if (s.source != "PMIx") {
    if (rank.empty() || size.empty()) throwInvalidArgument("chorusCommInitFromEnv: " + s.source + " is incomplete");
    s.nranks = parseInt("world size (" + s.source + ")", size, 1);
    s.rank = parseInt("rank (" + s.source + ")", rank, 0);
    if (s.rank >= s.nranks) {
      throwInvalidArgument("chorusCommInitFromEnv: rank " + rank + " is not below world size " + size + " (" +
                           s.source + ")");
    }
  }
  store = params::store();
  if (store.empty() && !env("MASTER_ADDR").empty() && !env("MASTER_PORT").empty()) {
    int port = parseInt("MASTER_PORT", env("MASTER_PORT"), 1);
    // Under torchrun the agent already serves its own TCPStore on MASTER_PORT: take the port after it.
    if (!env("TORCHELASTIC_USE_AGENT_STORE").empty()) ++port;
    if (port > 65535) throwInvalidArgument("MASTER_PORT " + env("MASTER_PORT") + " leaves no store port below 65536");
    // MASTER_ADDR may be an IPv6 address written bare, as torchrun accepts it: bracketed here for splitHostPort.
    store = joinHostPort(bareHost(env("MASTER_ADDR")), static_cast<uint16_t>(port));
  }
  if (store.empty() && pmixLaunched()) {
    // Rank 0 serves the store on a free port and PMIx carries its address (src/api/pmix_store.h).
    s.storeThroughPmix = true;
    s.source += ", store through PMIx";
  } else if (store.empty()) {
    throwInvalidArgument(
        "chorusCommInitFromEnv: no store address (set CHORUS_STORE=host:port, or MASTER_ADDR and "
        "MASTER_PORT, or run under a PMIx launcher such as mpirun or srun --mpi=pmix)");
  } else {
    splitHostPort(store, "CHORUS_STORE", &s.storeHost, &s.storePort);
    s.serveStore = s.rank == 0 && params::storeServed() != "1";
  }
  s.secret = params::secret();
  s.jobId = params::jobId();
  if (s.jobId.empty()) s.jobId = env("TORCHELASTIC_RUN_ID");
  if (s.jobId.empty()) s.jobId = "chorus-env";
  // Every process calls chorusCommInitFromEnv in the same order, so the k-th call of each names the same comm.
  static std::atomic<int> calls{0};
  s.keyPrefix = std::string("e").append(std::to_string(calls++)).append("/");
  return s;
}

}  // namespace chorus
