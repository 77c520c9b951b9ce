#include "core/comm_config.h"

#include "core/error.h"
#include "core/host_port.h"
#include "core/params.h"

namespace chorus {

namespace env_config {
using L = CommConfigLimits;
double timeoutSeconds() { return params::asSeconds("CHORUS_TIMEOUT", params::timeout()); }
std::string algo() { return params::algo(); }
std::string transports() { return params::transport(); }
size_t chunkSize() {
  return static_cast<size_t>(params::asBytes("CHORUS_CHUNK_SIZE", params::chunkSize(), L::kMinChunk, L::kMaxChunk));
}
size_t deviceChunkSize() {
  return static_cast<size_t>(
      params::asBytes("CHORUS_DEVICE_CHUNK_SIZE", params::deviceChunkSize(), L::kMinChunk, L::kMaxChunk));
}
int metricsPort() {
  if (params::metricsPort().empty()) return 0;
  return static_cast<int>(params::asInt("CHORUS_METRICS_PORT", params::metricsPort(), 0, L::kMaxPort));
}
int socketsPerPeer() {
  return static_cast<int>(params::asInt("CHORUS_NSOCKS", params::nsocks(), L::kMinSockets, L::kMaxSockets));
}
bool checkMismatch() { return params::asInt("CHORUS_CHECK_MISMATCH", params::checkMismatch(), 0, 1) == 1; }
size_t shmBufferBytes() {
  return static_cast<size_t>(
      params::asBytes("CHORUS_SHM_BUFFER", params::shmBuffer(), L::kMinShmBuffer, L::kMaxShmBuffer));
}
int shmCma() { return static_cast<int>(params::asInt("CHORUS_SHM_CMA", params::shmCma(), 0, L::kMaxShmCma)); }
bool topoProbe() { return params::asInt("CHORUS_TOPO_PROBE", params::topoProbe(), 0, 1) == 1; }
std::string socketIfname() { return params::socketIfname(); }
int socketFamily() { return parseSocketFamily(params::socketFamily(), "CHORUS_SOCKET_FAMILY"); }
bool splitShare() { return params::asInt("CHORUS_SPLIT_SHARE", params::splitShare(), 0, 1) == 1; }
size_t fusionThreshold() {
  return static_cast<size_t>(
      params::asBytes("CHORUS_FUSION_THRESHOLD", params::fusionThreshold(), 0, L::kMaxFusionThreshold));
}
std::string traceDir() { return params::trace(); }
int flightRecords() {
  return static_cast<int>(params::asInt("CHORUS_FLIGHT_RECORDS", params::flightRecords(), 0, L::kMaxFlightRecords));
}
std::string flightDir() { return params::flightDir(); }
bool autotune() { return params::asInt("CHORUS_AUTOTUNE", params::autotune(), 0, 1) == 1; }
std::string autotuneFile() { return params::autotuneFile(); }
bool encrypt() { return params::asInt("CHORUS_ENCRYPT", params::encrypt(), 0, 1) == 1; }
int deviceCalls() {
  const std::string mode = params::deviceCalls();
  if (mode == "auto") return static_cast<int>(DeviceCalls::kAuto);
  if (mode == "stream") return static_cast<int>(DeviceCalls::kStream);
  if (mode == "blocking") return static_cast<int>(DeviceCalls::kBlocking);
  throwInvalidArgument("CHORUS_DEVICE_CALLS=" + mode + ": expected auto, stream or blocking");
}
int traceLevel() {
  const std::string level = params::traceLevel();
  if (level == "call") return 0;
  if (level == "transfer") return 1;
  throwInvalidArgument("CHORUS_TRACE_LEVEL=" + level + ": expected call or transfer");
}
bool ibEmulation() { return params::asInt("CHORUS_IB_EMULATION", params::ibEmulation(), 0, 1) == 1; }
std::string ibHca() { return params::ibHca(); }
int ibGidIndex() {
  return static_cast<int>(params::asInt("CHORUS_IB_GID_INDEX", params::ibGidIndex(), -1, L::kMaxIbGidIndex));
}
int ibTimeout() {
  return static_cast<int>(params::asInt("CHORUS_IB_TIMEOUT", params::ibTimeout(), L::kMinIbTimeout, L::kMaxIbTimeout));
}
int ibRetryCnt() { return static_cast<int>(params::asInt("CHORUS_IB_RETRY_CNT", params::ibRetryCnt(), 0, L::kMaxIbRetryCnt)); }
bool ibDisable() { return params::asInt("CHORUS_IB_DISABLE", params::ibDisable(), 0, 1) == 1; }
int ibQpsPerPeer() {
  return static_cast<int>(params::asInt("CHORUS_IB_QPS_PER_PEER", params::ibQpsPerPeer(), L::kMinIbQps, L::kMaxIbQps));
}
std::string compression() {
  const std::string text = params::compression();
  const std::string problem = compressionProblem(text);
  if (!problem.empty()) throwInvalidArgument("CHORUS_COMPRESSION=" + text + ": " + problem);
  return text;
}
}  // namespace env_config

std::string compressionProblem(const std::string& text) {
  for (const char* valid : {"none", "bf16", "fp16", "bf16:all", "fp16:all"}) {
    if (text == valid) return {};
  }
  return "expected none, bf16, fp16, bf16:all or fp16:all";
}

std::string withCommName(const std::string& commName, const std::string& message) {
  if (commName.empty()) return message;
  const std::string prefix = "comm " + commName + ": ";
  return message.compare(0, prefix.size(), prefix) == 0 ? message : prefix + message;
}

CommConfig CommConfig::fromEnvironment() {
  CommConfig c;
  c.timeoutSeconds = env_config::timeoutSeconds();
  c.algo = env_config::algo();
  c.transports = env_config::transports();
  c.chunkSize = env_config::chunkSize();
  c.deviceChunkSize = env_config::deviceChunkSize();
  c.socketsPerPeer = env_config::socketsPerPeer();
  c.checkMismatch = env_config::checkMismatch();
  c.shmBufferBytes = env_config::shmBufferBytes();
  c.shmCma = env_config::shmCma();
  c.topoProbe = env_config::topoProbe();
  c.socketIfname = env_config::socketIfname();
  c.socketFamily = env_config::socketFamily();
  c.fusionThreshold = env_config::fusionThreshold();
  c.splitShare = env_config::splitShare();
  c.traceDir = env_config::traceDir();
  c.flightRecords = env_config::flightRecords();
  c.flightDir = env_config::flightDir();
  c.traceLevel = env_config::traceLevel();
  c.ibEmulation = env_config::ibEmulation();
  c.ibHca = env_config::ibHca();
  c.ibGidIndex = env_config::ibGidIndex();
  c.ibTimeout = env_config::ibTimeout();
  c.ibRetryCnt = env_config::ibRetryCnt();
  c.ibDisable = env_config::ibDisable();
  c.ibQpsPerPeer = env_config::ibQpsPerPeer();
  c.compression = env_config::compression();
  c.autotune = env_config::autotune();
  c.autotuneFile = env_config::autotuneFile();
  c.deviceCalls = env_config::deviceCalls();
  c.encrypt = env_config::encrypt();
  c.metricsPort = env_config::metricsPort();
  return c;
}

}  // namespace chorus
