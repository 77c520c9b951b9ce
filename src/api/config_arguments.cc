#include "src/api/config_arguments.h"

#include <cstddef>
#include <string>

#include "algorithms/selection/algo_rules.h"
#include "core/error.h"

namespace chorus {
namespace {

using L = CommConfigLimits;

// The fields every caller's header has (the first version's), and where each field ends.
constexpr size_t kFirstVersionBytes = offsetof(chorusConfig_t, commName) + sizeof(const char*);
#define CHORUS_FIELD_END(field) (offsetof(chorusConfig_t, field) + sizeof(chorusConfig_t::field))

class FieldReader {
 public:
  FieldReader(const chorusConfig_t& c, const char* call) : c_(c), call_(call) {}

  // True when the caller's struct has the field (its header may be older) and set it.
  template <typename T>
  bool has(size_t end, const T& value, const T& unset) const {
    return c_.size >= end && !(value == unset);
  }
  [[noreturn]] void bad(const char* field, const std::string& value, const std::string& why) const {
    throwInvalidArgument(std::string(call_) + ": config->" + field + " = " + value + " " + why);
  }

 private:
  const chorusConfig_t& c_;
  const char* call_;
};

std::string sizeText(size_t v) { return std::to_string(v); }

}  // namespace

CommConfig resolveConfig(const chorusConfig_t* config, const char* call) {
  if (config == nullptr) return CommConfig::fromEnvironment();
  const chorusConfig_t& c = *config;
  const std::string where = std::string(call) + ": config";
  if (c.magic != CHORUS_CONFIG_MAGIC) {
    throwInvalidArgument(where + "->magic is " + std::to_string(c.magic) +
                         ", not CHORUS_CONFIG_MAGIC: start from CHORUS_CONFIG_INITIALIZER");
  }
  if (c.size < kFirstVersionBytes || c.size > sizeof(chorusConfig_t)) {
    throwInvalidArgument(where + "->size is " + sizeText(c.size) + ", not a chorusConfig_t's (" +
                         sizeText(sizeof(chorusConfig_t)) + " bytes here): start from CHORUS_CONFIG_INITIALIZER");
  }
  if (c.version > CHORUS_VERSION_CODE) {
    throwInvalidArgument(where + "->version is " + std::to_string(c.version) + ", newer than this library (" +
                         std::to_string(CHORUS_VERSION_CODE) + ")");
  }
  const FieldReader f(c, call);
  CommConfig r;

  if (f.has(CHORUS_FIELD_END(timeoutSeconds), c.timeoutSeconds, double{CHORUS_CONFIG_UNDEF_DOUBLE})) {
    if (!(c.timeoutSeconds >= 0) || c.timeoutSeconds > 1e9) {
      f.bad("timeoutSeconds", std::to_string(c.timeoutSeconds), "is not a number of seconds in [0, 1e9]");
    }
    r.timeoutSeconds = c.timeoutSeconds;
  } else {
    r.timeoutSeconds = env_config::timeoutSeconds();
  }

  if (f.has(CHORUS_FIELD_END(algo), c.algo, static_cast<const char*>(CHORUS_CONFIG_UNDEF_PTR))) {
    try {
      (void)AlgoRules::parse(c.algo);
    } catch (const Error& e) {
      f.bad("algo", std::string("\"") + c.algo + "\"", std::string("does not parse: ") + e.what());
    }
    r.algo = c.algo;
  } else {
    r.algo = env_config::algo();
  }

  r.transports = f.has(CHORUS_FIELD_END(transports), c.transports, static_cast<const char*>(CHORUS_CONFIG_UNDEF_PTR))
                     ? std::string(c.transports)
                     : env_config::transports();

  if (f.has(CHORUS_FIELD_END(chunkSize), c.chunkSize, size_t{CHORUS_CONFIG_UNDEF_SIZE})) {
    if (c.chunkSize < L::kMinChunk || c.chunkSize > L::kMaxChunk) {
      f.bad("chunkSize", sizeText(c.chunkSize),
            "is outside [" + sizeText(L::kMinChunk) + ", " + sizeText(L::kMaxChunk) + "] bytes");
    }
    r.chunkSize = c.chunkSize;
  } else {
    r.chunkSize = env_config::chunkSize();
  }

  if (f.has(CHORUS_FIELD_END(socketsPerPeer), c.socketsPerPeer, int{CHORUS_CONFIG_UNDEF_INT})) {
    if (c.socketsPerPeer < L::kMinSockets || c.socketsPerPeer > L::kMaxSockets) {
      f.bad("socketsPerPeer", std::to_string(c.socketsPerPeer),
            "is outside [" + std::to_string(L::kMinSockets) + ", " + std::to_string(L::kMaxSockets) + "]");
    }
    r.socketsPerPeer = c.socketsPerPeer;
  } else {
    r.socketsPerPeer = env_config::socketsPerPeer();
  }

  if (f.has(CHORUS_FIELD_END(checkMismatch), c.checkMismatch, int{CHORUS_CONFIG_UNDEF_INT})) {
    if (c.checkMismatch != 0 && c.checkMismatch != 1) f.bad("checkMismatch", std::to_string(c.checkMismatch), "is not 0 or 1");
    r.checkMismatch = c.checkMismatch == 1;
  } else {
    r.checkMismatch = env_config::checkMismatch();
  }

  if (f.has(CHORUS_FIELD_END(commName), c.commName, static_cast<const char*>(CHORUS_CONFIG_UNDEF_PTR))) {
    r.commName = c.commName;
  }

  if (f.has(CHORUS_FIELD_END(shmBufferBytes), c.shmBufferBytes, size_t{CHORUS_CONFIG_UNDEF_SIZE})) {
    if (c.shmBufferBytes < L::kMinShmBuffer || c.shmBufferBytes > L::kMaxShmBuffer) {
      f.bad("shmBufferBytes", sizeText(c.shmBufferBytes),
            "is outside [" + sizeText(L::kMinShmBuffer) + ", " + sizeText(L::kMaxShmBuffer) + "] bytes");
    }
    r.shmBufferBytes = c.shmBufferBytes;
  } else {
    r.shmBufferBytes = env_config::shmBufferBytes();
  }

  if (f.has(CHORUS_FIELD_END(shmCma), c.shmCma, int{CHORUS_CONFIG_UNDEF_INT})) {
    if (c.shmCma < 0 || c.shmCma > L::kMaxShmCma) f.bad("shmCma", std::to_string(c.shmCma), "is not 0, 1 or 2");
    r.shmCma = c.shmCma;
  } else {
    r.shmCma = env_config::shmCma();
  }

  if (f.has(CHORUS_FIELD_END(topoProbe), c.topoProbe, int{CHORUS_CONFIG_UNDEF_INT})) {
    if (c.topoProbe != 0 && c.topoProbe != 1) f.bad("topoProbe", std::to_string(c.topoProbe), "is not 0 or 1");
    r.topoProbe = c.topoProbe == 1;
  } else {
    r.topoProbe = env_config::topoProbe();
  }

  r.socketIfname =
      f.has(CHORUS_FIELD_END(socketIfname), c.socketIfname, static_cast<const char*>(CHORUS_CONFIG_UNDEF_PTR))
          ? std::string(c.socketIfname)
          : env_config::socketIfname();
  return r;
}

#undef CHORUS_FIELD_END

}  // namespace chorus
