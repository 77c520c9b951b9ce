// The settings of one communicator, resolved once at its init: each from the caller's chorusConfig_t field when
// set (src/api/config_arguments.cc), else from its environment variable (params.def), else that one's default.
// Everything below the API reads these, never the environment, so two communicators of a process can differ.
#pragma once

#include <cstddef>
#include <string>

namespace chorus {

struct CommConfig {
  double timeoutSeconds = 300;  // CHORUS_TIMEOUT; 0 = forever
  std::string algo;             // CHORUS_ALGO syntax; empty: the cost model decides everything
  std::string transports;       // CHORUS_TRANSPORT syntax; empty: every transport, in probe order
  size_t chunkSize = 512 << 10;  // CHORUS_CHUNK_SIZE
  size_t deviceChunkSize = size_t{8} << 20;  // CHORUS_DEVICE_CHUNK_SIZE: device-buffer calls' slices
  int metricsPort = 0;                       // CHORUS_METRICS_PORT: Prometheus metrics on port + local rank; 0 off
  int socketsPerPeer = 1;        // CHORUS_NSOCKS
  bool checkMismatch = true;     // CHORUS_CHECK_MISMATCH
  std::string commName;          // empty: unnamed
  size_t shmBufferBytes = 1 << 20;  // CHORUS_SHM_BUFFER
  int shmCma = 1;                   // CHORUS_SHM_CMA: 0 never, 1 when calibrated fast enough, 2 always
  bool topoProbe = false;           // CHORUS_TOPO_PROBE
  std::string socketIfname;         // CHORUS_SOCKET_IFNAME
  int socketFamily = 0;             // CHORUS_SOCKET_FAMILY: AF_INET, AF_INET6 or AF_UNSPEC (0: either)
  size_t fusionThreshold = size_t{64} << 20;  // CHORUS_FUSION_THRESHOLD; 0: no fusion
  bool splitShare = true;                     // CHORUS_SPLIT_SHARE
  std::string traceDir;                       // CHORUS_TRACE; empty: no trace
  int flightRecords = 2048;                   // CHORUS_FLIGHT_RECORDS: calls kept by the flight recorder; 0 off
  std::string flightDir;                      // CHORUS_FLIGHT_DIR; empty: no dumps
  int traceLevel = 0;                         // CHORUS_TRACE_LEVEL: 0 call, 1 transfer (TraceLevel)
  bool ibEmulation = false;                   // CHORUS_IB_EMULATION
  std::string ibHca;                          // CHORUS_IB_HCA
  int ibGidIndex = -1;                        // CHORUS_IB_GID_INDEX; -1: chosen
  int ibTimeout = 20;                         // CHORUS_IB_TIMEOUT
  int ibRetryCnt = 7;                         // CHORUS_IB_RETRY_CNT
  bool ibDisable = false;                     // CHORUS_IB_DISABLE
  int ibQpsPerPeer = 1;                       // CHORUS_IB_QPS_PER_PEER
  std::string compression = "none";           // CHORUS_COMPRESSION: none, bf16, fp16, bf16:all, fp16:all
  bool autotune = false;                      // CHORUS_AUTOTUNE
  std::string autotuneFile;                   // CHORUS_AUTOTUNE_FILE; empty: none
  bool encrypt = false;                       // CHORUS_ENCRYPT
  int deviceCalls = 0;                        // CHORUS_DEVICE_CALLS: 0 auto, 1 stream, 2 blocking (DeviceCalls)

  // Every field from the environment (each variable's default when unset); throws chorusInvalidArgument naming
  // the variable for a value out of range.
  static CommConfig fromEnvironment();
};

// "comm NAME: " + message for a named communicator (once: a message that starts so already is left alone); the
// message alone for an unnamed one. Every error a communicator reports goes through this.
std::string withCommName(const std::string& commName, const std::string& message);

// The ranges each setting accepts, whether it comes from a config field or a variable.
struct CommConfigLimits {
  static constexpr size_t kMinChunk = 4096, kMaxChunk = size_t{64} << 20;
  static constexpr int kMinSockets = 1, kMaxSockets = 16;
  static constexpr size_t kMinShmBuffer = size_t{64} << 10, kMaxShmBuffer = size_t{64} << 20;
  static constexpr int kMaxShmCma = 2;
  static constexpr size_t kMaxFusionThreshold = size_t{1} << 30;
  static constexpr int kMaxFlightRecords = 1 << 20;
  static constexpr int kMaxIbGidIndex = 255;
  static constexpr int kMinIbTimeout = 1, kMaxIbTimeout = 31;
  static constexpr int kMaxIbRetryCnt = 7;
  static constexpr int kMinIbQps = 1, kMaxIbQps = 16;
  static constexpr int kMaxPort = 65535;
};

// One setting from its variable, each as fromEnvironment() reads it (for fields the caller left unset).
namespace env_config {
double timeoutSeconds();
std::string algo();
std::string transports();
size_t chunkSize();
size_t deviceChunkSize();
int metricsPort();
int socketsPerPeer();
bool checkMismatch();
size_t shmBufferBytes();
int shmCma();
bool topoProbe();
std::string socketIfname();
int socketFamily();
size_t fusionThreshold();
bool splitShare();
std::string traceDir();
int flightRecords();
std::string flightDir();
int traceLevel();
bool ibEmulation();
std::string ibHca();
int ibGidIndex();
int ibTimeout();
int ibRetryCnt();
bool ibDisable();
int ibQpsPerPeer();
std::string compression();
bool autotune();
std::string autotuneFile();
int deviceCalls();
bool encrypt();
}  // namespace env_config

// How device-buffer calls wait (config deviceCalls, CHORUS_DEVICE_CALLS; docs/device_calls.md).
enum class DeviceCalls { kAuto = 0, kStream = 1, kBlocking = 2 };

// Empty when `text` is a CHORUS_COMPRESSION value (none, bf16, fp16, bf16:all, fp16:all); else what is wrong.
std::string compressionProblem(const std::string& text);

}  // namespace chorus
