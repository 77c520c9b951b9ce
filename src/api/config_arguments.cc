#include "src/api/config_arguments.h"

#include <cstddef>
#include <cstdio>
#include <string>

#include "algorithms/selection/algo_rules.h"
#include "core/error.h"
#include "core/host_port.h"

namespace chorus {
namespace {

using L = CommConfigLimits;

// The fields every caller's header has (the first version's).
constexpr size_t kFirstVersionBytes = offsetof(chorusConfig_t, commName) + sizeof(const char*);
// Where a field ends: a caller whose struct (c.size) stops before it did not set it.
#define CHORUS_FIELD_END(field) (offsetof(chorusConfig_t, field) + sizeof(chorusConfig_t::field))

// Reads the fields of one caller's struct: each set one checked, each unset one from its variable.
class FieldReader {
 public:
  FieldReader(const chorusConfig_t& c, const char* call) : c_(c), call_(call) {}

  // A number in [lo, hi], or its variable's value (env()) when unset.
  template <typename T, typename Env>
  T number(size_t end, const char* name, T value, T unset, T lo, T hi, Env env) const {
    if (!isSet(end, value, unset)) return env();
    if (!(value >= lo && value <= hi)) {
      bad(name, std::to_string(value), "is outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    }
    return value;
  }
  // 0 or 1 as a bool, or its variable's.
  template <typename Env>
  bool flag(size_t end, const char* name, int value, Env env) const {
    return number(end, name, value, int{CHORUS_CONFIG_UNDEF_INT}, 0, 1, [&] { return env() ? 1 : 0; }) == 1;
  }
  // A string, or its variable's.
  template <typename Env>
  std::string text(size_t end, const char* value, Env env) const {
    return isSet(end, value, static_cast<const char*>(CHORUS_CONFIG_UNDEF_PTR)) ? std::string(value) : env();
  }
  // True when the caller's struct has the field (its header may be older) and set it.
  template <typename T>
  bool isSet(size_t end, const T& value, const T& unset) const {
    return c_.size >= end && !(value == unset);
  }
  [[noreturn]] void bad(const char* field, const std::string& value, const std::string& why) const {
    throwInvalidArgument(std::string(call_) + ": config->" + field + " = " + value + " " + why);
  }

 private:
  const chorusConfig_t& c_;
  const char* call_;
};

// The header's own fields: a struct from CHORUS_CONFIG_INITIALIZER of a header this library can read.
void checkHeader(const chorusConfig_t& c, const char* call) {
  const std::string where = std::string(call) + ": config";
  if (c.magic != CHORUS_CONFIG_MAGIC) {
    throwInvalidArgument(where + "->magic is " + std::to_string(c.magic) +
                         ", not CHORUS_CONFIG_MAGIC: start from CHORUS_CONFIG_INITIALIZER");
  }
  if (c.size < kFirstVersionBytes || c.size > sizeof(chorusConfig_t)) {
    throwInvalidArgument(where + "->size is " + std::to_string(c.size) + ", not a chorusConfig_t's (" +
                         std::to_string(sizeof(chorusConfig_t)) + " bytes here): start from CHORUS_CONFIG_INITIALIZER");
  }
  if (c.version > CHORUS_VERSION_CODE) {
    throwInvalidArgument(where + "->version is " + std::to_string(c.version) + ", newer than this library (" +
                         std::to_string(CHORUS_VERSION_CODE) + ")");
  }
}

}  // namespace

CommConfig resolveConfig(const chorusConfig_t* config, const char* call, const CommConfig* base) {
  if (config == nullptr) return base ? *base : CommConfig::fromEnvironment();
  const chorusConfig_t& c = *config;
  checkHeader(c, call);
  const FieldReader f(c, call);
  // Where an unset field comes from: `base` when given (a split's parent), else the field's variable.
  auto otherwise = [base](auto env, auto CommConfig::*field) {
    return [base, env, field] { return base ? base->*field : env(); };
  };
  CommConfig r;
  r.timeoutSeconds = f.number(CHORUS_FIELD_END(timeoutSeconds), "timeoutSeconds", c.timeoutSeconds,
                              double{CHORUS_CONFIG_UNDEF_DOUBLE}, 0.0, 1e9,
                              otherwise(env_config::timeoutSeconds, &CommConfig::timeoutSeconds));
  r.algo = f.text(CHORUS_FIELD_END(algo), c.algo, otherwise(env_config::algo, &CommConfig::algo));
  if (f.isSet(CHORUS_FIELD_END(algo), c.algo, static_cast<const char*>(CHORUS_CONFIG_UNDEF_PTR))) {
    try {
      (void)AlgoRules::parse(r.algo);
    } catch (const Error& e) {
      f.bad("algo", "\"" + r.algo + "\"", std::string("does not parse: ") + e.what());
    }
  }
  r.transports = f.text(CHORUS_FIELD_END(transports), c.transports,
                        otherwise(env_config::transports, &CommConfig::transports));
  r.chunkSize = f.number(CHORUS_FIELD_END(chunkSize), "chunkSize", c.chunkSize, size_t{CHORUS_CONFIG_UNDEF_SIZE},
                         L::kMinChunk, L::kMaxChunk, otherwise(env_config::chunkSize, &CommConfig::chunkSize));
  r.socketsPerPeer = f.number(CHORUS_FIELD_END(socketsPerPeer), "socketsPerPeer", c.socketsPerPeer,
                              int{CHORUS_CONFIG_UNDEF_INT}, L::kMinSockets, L::kMaxSockets,
                              otherwise(env_config::socketsPerPeer, &CommConfig::socketsPerPeer));
  r.checkMismatch = f.flag(CHORUS_FIELD_END(checkMismatch), "checkMismatch", c.checkMismatch,
                           otherwise(env_config::checkMismatch, &CommConfig::checkMismatch));
  r.commName = f.text(CHORUS_FIELD_END(commName), c.commName,
                      otherwise([] { return std::string(); }, &CommConfig::commName));
  r.shmBufferBytes = f.number(CHORUS_FIELD_END(shmBufferBytes), "shmBufferBytes", c.shmBufferBytes,
                              size_t{CHORUS_CONFIG_UNDEF_SIZE}, L::kMinShmBuffer, L::kMaxShmBuffer,
                              otherwise(env_config::shmBufferBytes, &CommConfig::shmBufferBytes));
  r.shmCma = f.number(CHORUS_FIELD_END(shmCma), "shmCma", c.shmCma, int{CHORUS_CONFIG_UNDEF_INT}, 0, L::kMaxShmCma,
                      otherwise(env_config::shmCma, &CommConfig::shmCma));
  r.topoProbe = f.flag(CHORUS_FIELD_END(topoProbe), "topoProbe", c.topoProbe,
                       otherwise(env_config::topoProbe, &CommConfig::topoProbe));
  r.socketIfname = f.text(CHORUS_FIELD_END(socketIfname), c.socketIfname,
                          otherwise(env_config::socketIfname, &CommConfig::socketIfname));
  r.fusionThreshold = f.number(CHORUS_FIELD_END(fusionThreshold), "fusionThreshold", c.fusionThreshold,
                               size_t{CHORUS_CONFIG_UNDEF_SIZE}, size_t{0}, L::kMaxFusionThreshold,
                               otherwise(env_config::fusionThreshold, &CommConfig::fusionThreshold));
  r.splitShare = f.flag(CHORUS_FIELD_END(splitShare), "splitShare", c.splitShare,
                        otherwise(env_config::splitShare, &CommConfig::splitShare));
  r.traceDir = f.text(CHORUS_FIELD_END(traceDir), c.traceDir, otherwise(env_config::traceDir, &CommConfig::traceDir));
  r.traceLevel = f.number(CHORUS_FIELD_END(traceLevel), "traceLevel", c.traceLevel, int{CHORUS_CONFIG_UNDEF_INT}, 0, 1,
                          otherwise(env_config::traceLevel, &CommConfig::traceLevel));
  r.ibEmulation = f.flag(CHORUS_FIELD_END(ibEmulation), "ibEmulation", c.ibEmulation,
                         otherwise(env_config::ibEmulation, &CommConfig::ibEmulation));
  r.ibHca = f.text(CHORUS_FIELD_END(ibHca), c.ibHca, otherwise(env_config::ibHca, &CommConfig::ibHca));
  r.ibGidIndex = f.number(CHORUS_FIELD_END(ibGidIndex), "ibGidIndex", c.ibGidIndex, int{CHORUS_CONFIG_UNDEF_INT}, -1,
                          L::kMaxIbGidIndex, otherwise(env_config::ibGidIndex, &CommConfig::ibGidIndex));
  r.ibTimeout = f.number(CHORUS_FIELD_END(ibTimeout), "ibTimeout", c.ibTimeout, int{CHORUS_CONFIG_UNDEF_INT},
                         L::kMinIbTimeout, L::kMaxIbTimeout, otherwise(env_config::ibTimeout, &CommConfig::ibTimeout));
  r.ibRetryCnt = f.number(CHORUS_FIELD_END(ibRetryCnt), "ibRetryCnt", c.ibRetryCnt, int{CHORUS_CONFIG_UNDEF_INT}, 0,
                          L::kMaxIbRetryCnt, otherwise(env_config::ibRetryCnt, &CommConfig::ibRetryCnt));
  r.ibDisable = f.flag(CHORUS_FIELD_END(ibDisable), "ibDisable", c.ibDisable,
                       otherwise(env_config::ibDisable, &CommConfig::ibDisable));
  r.ibQpsPerPeer = f.number(CHORUS_FIELD_END(ibQpsPerPeer), "ibQpsPerPeer", c.ibQpsPerPeer, int{CHORUS_CONFIG_UNDEF_INT},
                            L::kMinIbQps, L::kMaxIbQps, otherwise(env_config::ibQpsPerPeer, &CommConfig::ibQpsPerPeer));
  r.compression = f.text(CHORUS_FIELD_END(compression), c.compression,
                         otherwise(env_config::compression, &CommConfig::compression));
  if (const std::string problem = compressionProblem(r.compression); !problem.empty()) {
    f.bad("compression", "\"" + r.compression + "\"", problem);
  }
  r.autotune = f.flag(CHORUS_FIELD_END(autotune), "autotune", c.autotune,
                      otherwise(env_config::autotune, &CommConfig::autotune));
  r.autotuneFile = f.text(CHORUS_FIELD_END(autotuneFile), c.autotuneFile,
                          otherwise(env_config::autotuneFile, &CommConfig::autotuneFile));
  r.deviceChunkSize = f.number(CHORUS_FIELD_END(deviceChunkSize), "deviceChunkSize", c.deviceChunkSize,
                               size_t{CHORUS_CONFIG_UNDEF_SIZE}, L::kMinChunk, L::kMaxChunk,
                               otherwise(env_config::deviceChunkSize, &CommConfig::deviceChunkSize));
  r.flightRecords =
      f.number(CHORUS_FIELD_END(flightRecords), "flightRecords", c.flightRecords, int{CHORUS_CONFIG_UNDEF_INT}, 0,
               L::kMaxFlightRecords, otherwise(env_config::flightRecords, &CommConfig::flightRecords));
  r.flightDir =
      f.text(CHORUS_FIELD_END(flightDir), c.flightDir, otherwise(env_config::flightDir, &CommConfig::flightDir));
  r.metricsPort = f.number(CHORUS_FIELD_END(metricsPort), "metricsPort", c.metricsPort, int{CHORUS_CONFIG_UNDEF_INT}, 0,
                           L::kMaxPort, otherwise(env_config::metricsPort, &CommConfig::metricsPort));
  r.encrypt = f.flag(CHORUS_FIELD_END(encrypt), "encrypt", c.encrypt, otherwise(env_config::encrypt, &CommConfig::encrypt));
  r.deviceCalls = f.number(CHORUS_FIELD_END(deviceCalls), "deviceCalls", c.deviceCalls, int{CHORUS_CONFIG_UNDEF_INT}, 0,
                           2, otherwise(env_config::deviceCalls, &CommConfig::deviceCalls));
  if (f.isSet(CHORUS_FIELD_END(socketFamily), c.socketFamily, static_cast<const char*>(CHORUS_CONFIG_UNDEF_PTR))) {
    try {
      r.socketFamily = parseSocketFamily(c.socketFamily, "socketFamily");
    } catch (const Error& e) {
      f.bad("socketFamily", "\"" + std::string(c.socketFamily) + "\"", "is not AF_INET, AF_INET6 or \"\" (either)");
    }
  } else {
    r.socketFamily = base ? base->socketFamily : env_config::socketFamily();
  }
  return r;
}

#undef CHORUS_FIELD_END

}  // namespace chorus
