// Chorus C++ API: an RAII communicator over the C ABI, typed spans, exceptions carrying the result code.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "chorus/chorus.h"

namespace chorus {

// Thrown by every call that does not return chorusSuccess; what() is chorusGetLastError's text.
class Exception : public std::runtime_error {
 public:
  Exception(chorusResult_t code, const std::string& message) : std::runtime_error(message), code_(code) {}
  chorusResult_t code() const noexcept { return code_; }

 private:
  chorusResult_t code_;
};

// fp8 elements carried as their bits (C++ has no fp8 type): a std::span<Float8e4m3> reduces as chorusFloat8e4m3.
struct Float8e4m3 {
  uint8_t bits;
};
struct Float8e5m2 {
  uint8_t bits;
};

// The chorusDataType_t of a C++ element type (float16/bfloat16 have no C++ type here: use the raw calls).
template <class T>
constexpr chorusDataType_t dataTypeOf() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, int8_t>) return chorusInt8;
  else if constexpr (std::is_same_v<U, uint8_t>) return chorusUint8;
  else if constexpr (std::is_same_v<U, int32_t>) return chorusInt32;
  else if constexpr (std::is_same_v<U, uint32_t>) return chorusUint32;
  else if constexpr (std::is_same_v<U, int64_t>) return chorusInt64;
  else if constexpr (std::is_same_v<U, uint64_t>) return chorusUint64;
  else if constexpr (std::is_same_v<U, float>) return chorusFloat32;
  else if constexpr (std::is_same_v<U, double>) return chorusFloat64;
  else if constexpr (std::is_same_v<U, Float8e4m3>)
    return chorusFloat8e4m3;
  else if constexpr (std::is_same_v<U, Float8e5m2>)
    return chorusFloat8e5m2;
  else static_assert(sizeof(T) == 0, "no Chorus datatype for this element type");
}

enum class ReduceOp {
  kSum = chorusSum,
  kProd = chorusProd,
  kMax = chorusMax,
  kMin = chorusMin,
  kAvg = chorusAvg,
  kBand = chorusBand,  // bitwise and, or, xor: integer types only
  kBor = chorusBor,
  kBxor = chorusBxor,
};

namespace detail {
inline void check(chorusResult_t r, chorusComm_t comm) {
  if (r != chorusSuccess) throw Exception(r, std::string(chorusGetErrorString(r)) + ": " + chorusGetLastError(comm));
}
}  // namespace detail

// Per-communicator settings, chorusConfig_t's fields: a member left empty takes its environment variable's value.
//   chorus::Communicator comm(n, id, rank, {.algo = "ring", .commName = "gradients"});
struct Config {
  std::optional<double> timeoutSeconds{};  // CHORUS_TIMEOUT; 0 = forever
  std::optional<std::string> algo{};       // CHORUS_ALGO syntax
  std::optional<std::string> transports{}; // CHORUS_TRANSPORT syntax
  std::optional<size_t> chunkSize{};       // CHORUS_CHUNK_SIZE
  std::optional<int> socketsPerPeer{};     // CHORUS_NSOCKS
  std::optional<bool> checkMismatch{};     // CHORUS_CHECK_MISMATCH
  std::optional<std::string> commName{};   // in every log line and error message of the communicator
  std::optional<size_t> shmBufferBytes{};  // CHORUS_SHM_BUFFER
  std::optional<int> shmCma{};             // CHORUS_SHM_CMA
  std::optional<bool> topoProbe{};         // CHORUS_TOPO_PROBE
  std::optional<std::string> socketIfname{};  // CHORUS_SOCKET_IFNAME
  std::optional<size_t> fusionThreshold{};    // CHORUS_FUSION_THRESHOLD
  std::optional<bool> splitShare{};           // CHORUS_SPLIT_SHARE
  std::optional<bool> ibEmulation{};          // CHORUS_IB_EMULATION
  std::optional<std::string> ibHca{};         // CHORUS_IB_HCA
  std::optional<int> ibGidIndex{};            // CHORUS_IB_GID_INDEX
  std::optional<int> ibTimeout{};             // CHORUS_IB_TIMEOUT
  std::optional<int> ibRetryCnt{};            // CHORUS_IB_RETRY_CNT
  std::optional<bool> ibDisable{};            // CHORUS_IB_DISABLE
  std::optional<int> ibQpsPerPeer{};          // CHORUS_IB_QPS_PER_PEER
  std::optional<std::string> compression{};   // CHORUS_COMPRESSION
  std::optional<bool> autotune{};             // CHORUS_AUTOTUNE
  std::optional<std::string> autotuneFile{};  // CHORUS_AUTOTUNE_FILE
  std::optional<std::string> traceDir{};      // CHORUS_TRACE
  std::optional<int> traceLevel{};            // CHORUS_TRACE_LEVEL: 0 call, 1 transfer
  std::optional<int> deviceCalls{};           // CHORUS_DEVICE_CALLS: 0 auto, 1 stream, 2 blocking
  std::optional<bool> encrypt{};              // CHORUS_ENCRYPT
  std::optional<size_t> deviceChunkSize{};    // CHORUS_DEVICE_CHUNK_SIZE
  std::optional<int> flightRecords{};         // CHORUS_FLIGHT_RECORDS
  std::optional<std::string> flightDir{};     // CHORUS_FLIGHT_DIR
  std::optional<std::string> socketFamily{};  // CHORUS_SOCKET_FAMILY: "AF_INET", "AF_INET6", "" either
  std::optional<int> metricsPort{};           // CHORUS_METRICS_PORT: 0 off

  // The C struct; its strings point into this object.
  chorusConfig_t toC() const {
    chorusConfig_t c = CHORUS_CONFIG_INITIALIZER;
    if (timeoutSeconds) c.timeoutSeconds = *timeoutSeconds;
    if (algo) c.algo = algo->c_str();
    if (transports) c.transports = transports->c_str();
    if (chunkSize) c.chunkSize = *chunkSize;
    if (socketsPerPeer) c.socketsPerPeer = *socketsPerPeer;
    if (checkMismatch) c.checkMismatch = *checkMismatch ? 1 : 0;
    if (commName) c.commName = commName->c_str();
    if (shmBufferBytes) c.shmBufferBytes = *shmBufferBytes;
    if (shmCma) c.shmCma = *shmCma;
    if (topoProbe) c.topoProbe = *topoProbe ? 1 : 0;
    if (socketIfname) c.socketIfname = socketIfname->c_str();
    if (fusionThreshold) c.fusionThreshold = *fusionThreshold;
    if (splitShare) c.splitShare = *splitShare ? 1 : 0;
    if (ibEmulation) c.ibEmulation = *ibEmulation ? 1 : 0;
    if (ibHca) c.ibHca = ibHca->c_str();
    if (ibGidIndex) c.ibGidIndex = *ibGidIndex;
    if (ibTimeout) c.ibTimeout = *ibTimeout;
    if (ibRetryCnt) c.ibRetryCnt = *ibRetryCnt;
    if (ibDisable) c.ibDisable = *ibDisable ? 1 : 0;
    if (ibQpsPerPeer) c.ibQpsPerPeer = *ibQpsPerPeer;
    if (compression) c.compression = compression->c_str();
    if (autotune) c.autotune = *autotune ? 1 : 0;
    if (autotuneFile) c.autotuneFile = autotuneFile->c_str();
    if (traceDir) c.traceDir = traceDir->c_str();
    if (traceLevel) c.traceLevel = *traceLevel;
    if (deviceCalls) c.deviceCalls = *deviceCalls;
    if (encrypt) c.encrypt = *encrypt ? 1 : 0;
    if (deviceChunkSize) c.deviceChunkSize = *deviceChunkSize;
    if (flightRecords) c.flightRecords = *flightRecords;
    if (flightDir) c.flightDir = flightDir->c_str();
    if (socketFamily) c.socketFamily = socketFamily->c_str();
    if (metricsPort) c.metricsPort = *metricsPort;
    return c;
  }
};

// A rendezvous token: made on one rank, copied to every rank by the application.
inline chorusUniqueId makeUniqueId() {
  chorusUniqueId id;
  detail::check(chorusGetUniqueId(&id), nullptr);
  return id;
}

// chorusMemAlloc / chorusMemFree: host memory a window maps into the other processes of the host (puts into it are
// a copy by the sender: docs/windows.md).
inline void* memAlloc(size_t bytes) {
  void* p = nullptr;
  detail::check(chorusMemAlloc(&p, bytes), nullptr);
  return p;
}
inline void memFree(void* p) { detail::check(chorusMemFree(p), nullptr); }

// A host stream (chorusHostStreamCreate) for its lifetime: calls on host buffers made with handle() are queued and
// return at once; they run in order in the background. The destructor waits for them (errors it cannot throw).
class HostStream {
 public:
  HostStream() { detail::check(chorusHostStreamCreate(&stream_), nullptr); }
  HostStream(HostStream&& o) noexcept : stream_(std::exchange(o.stream_, nullptr)) {}
  HostStream& operator=(HostStream&& o) noexcept {
    if (this != &o) {
      if (stream_) chorusHostStreamDestroy(stream_);
      stream_ = std::exchange(o.stream_, nullptr);
    }
    return *this;
  }
  HostStream(const HostStream&) = delete;
  HostStream& operator=(const HostStream&) = delete;
  ~HostStream() {
    if (stream_) chorusHostStreamDestroy(stream_);
  }
  chorusStream_t handle() const { return stream_; }
  // Waits for every queued call; throws the first one's error.
  void synchronize() { detail::check(chorusStreamSynchronize(stream_), nullptr); }
  // True once every queued call has finished; throws the first one's error.
  bool done() {
    const chorusResult_t r = chorusStreamQuery(stream_);
    if (r == chorusInProgress) return false;
    detail::check(r, nullptr);
    return true;
  }

 private:
  chorusStream_t stream_ = nullptr;
};

// An event (chorusEventCreate): record() marks the calls queued on a host stream so far.
class Event {
 public:
  Event() { detail::check(chorusEventCreate(&event_), nullptr); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() { chorusEventDestroy(event_); }
  void record(const HostStream& stream) { detail::check(chorusEventRecord(event_, stream.handle()), nullptr); }
  void synchronize() { detail::check(chorusEventSynchronize(event_), nullptr); }
  bool done() {
    const chorusResult_t r = chorusEventQuery(event_);
    if (r == chorusInProgress) return false;
    detail::check(r, nullptr);
    return true;
  }

 private:
  chorusEvent_t event_ = nullptr;
};

// chorusGroupStart for its lifetime: the calls made while it lives run together when it ends (chorusGroupEnd,
// whose error is thrown by end(); the destructor ends a group still open but cannot throw).
class Group {
 public:
  Group() { detail::check(chorusGroupStart(), nullptr); }
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;
  ~Group() {
    if (open_) chorusGroupEnd();
  }
  void end() {
    open_ = false;
    detail::check(chorusGroupEnd(), nullptr);
  }

 private:
  bool open_ = true;
};

// Owns a chorusComm_t; destroys it on scope exit. Calls block (host buffers), or with a HostStream's handle() are
// queued on it; failures throw chorus::Exception.
class Communicator {
 public:
  // Joins as `rank` of `nranks` through `id`.
  Communicator(int nranks, const chorusUniqueId& id, int rank, const Config& config = {}) {
    chorusConfig_t c = config.toC();
    detail::check(chorusCommInitRankConfig(&comm_, nranks, id, rank, &c), nullptr);
  }
  // Joins from the environment (chorusrun, torchrun, mpirun, srun).
  static Communicator fromEnv(const Config& config = {}) {
    chorusConfig_t c = config.toC();
    chorusComm_t comm = nullptr;
    detail::check(chorusCommInitFromEnvConfig(&comm, &c), nullptr);
    return Communicator(comm);
  }
  Communicator(Communicator&& o) noexcept : comm_(std::exchange(o.comm_, nullptr)) {}
  Communicator& operator=(Communicator&& o) noexcept {
    if (this != &o) {
      chorusCommDestroy(comm_);
      comm_ = std::exchange(o.comm_, nullptr);
    }
    return *this;
  }
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  ~Communicator() { chorusCommDestroy(comm_); }

  int rank() const {
    int r = 0;
    detail::check(chorusCommUserRank(comm_, &r), comm_);
    return r;
  }
  int size() const {
    int n = 0;
    detail::check(chorusCommCount(comm_, &n), comm_);
    return n;
  }
  // Aborts: any blocked call returns, and this object no longer owns a communicator.
  void abort() { chorusCommAbort(std::exchange(comm_, nullptr)); }
  // chorusCommRegister / chorusCommDeregister: keep a memory region for a buffer the calls send from often.
  void* registerBuffer(void* buff, size_t bytes) {
    void* h = nullptr;
    detail::check(chorusCommRegister(comm_, buff, bytes, &h), comm_);
    return h;
  }
  void deregisterBuffer(void* h) { detail::check(chorusCommDeregister(comm_, h), comm_); }
  chorusComm_t handle() const { return comm_; }

  // recv = reduction of every rank's send (same length; may be the same span for in place).
  template <class T>
  void allReduce(std::span<const T> send, std::span<T> recv, ReduceOp op = ReduceOp::kSum,
                 chorusStream_t stream = nullptr) {
    sameLength(send.size(), recv.size(), "allReduce");
    detail::check(chorusAllReduce(send.data(), recv.data(), send.size(), dataTypeOf<T>(),
                                  static_cast<chorusRedOp_t>(op), comm_, stream), comm_);
  }
  template <class T>
  void allReduce(std::span<T> data, ReduceOp op = ReduceOp::kSum, chorusStream_t stream = nullptr) {
    allReduce(std::span<const T>(data), data, op, stream);
  }
  // Every rank's data = root's data.
  template <class T>
  void broadcast(std::span<T> data, int root, chorusStream_t stream = nullptr) {
    detail::check(chorusBroadcast(data.data(), data.data(), data.size(), dataTypeOf<T>(), root, comm_, stream), comm_);
  }
  // root's recv = reduction of every rank's send (recv is ignored elsewhere).
  template <class T>
  void reduce(std::span<const T> send, std::span<T> recv, int root, ReduceOp op = ReduceOp::kSum,
              chorusStream_t stream = nullptr) {
    if (rank() == root) sameLength(send.size(), recv.size(), "reduce");
    detail::check(chorusReduce(send.data(), recv.data(), send.size(), dataTypeOf<T>(), static_cast<chorusRedOp_t>(op),
                               root, comm_, stream), comm_);
  }
  // recv (size() * send.size() elements) = every rank's send, in rank order.
  template <class T>
  void allGather(std::span<const T> send, std::span<T> recv, chorusStream_t stream = nullptr) {
    sameLength(send.size() * static_cast<size_t>(size()), recv.size(), "allGather");
    detail::check(chorusAllGather(send.data(), recv.data(), send.size(), dataTypeOf<T>(), comm_, stream), comm_);
  }
  // recv = this rank's block of the reduction of every rank's send (size() * recv.size() elements).
  template <class T>
  void reduceScatter(std::span<const T> send, std::span<T> recv, ReduceOp op = ReduceOp::kSum,
                     chorusStream_t stream = nullptr) {
    sameLength(recv.size() * static_cast<size_t>(size()), send.size(), "reduceScatter");
    detail::check(chorusReduceScatter(send.data(), recv.data(), recv.size(), dataTypeOf<T>(),
                                      static_cast<chorusRedOp_t>(op), comm_, stream), comm_);
  }
  // Sends data to `peer`, which receives it with recv(); blocks until sent, unless inside a Group.
  template <class T>
  void send(std::span<const T> data, int peer, chorusStream_t stream = nullptr) {
    detail::check(chorusSend(data.data(), data.size(), dataTypeOf<T>(), peer, comm_, stream), comm_);
  }
  // One-sided calls (chorus.h's windows): this rank's part of a window, registered collectively; deregister with
  // windowDeregister (collective) before the buffer goes.
  chorusWindow_t windowRegister(void* buff, size_t bytes, int flags = CHORUS_WIN_DEFAULT) {
    chorusWindow_t win = nullptr;
    detail::check(chorusCommWindowRegister(comm_, buff, bytes, &win, flags), comm_);
    return win;
  }
  void windowDeregister(chorusWindow_t win) { detail::check(chorusCommWindowDeregister(comm_, win), comm_); }
  // Writes data into peer's window at byte offset peerOffset, then raises signal sigIdx there.
  template <class T>
  void putSignal(std::span<const T> data, int peer, chorusWindow_t win, size_t peerOffset, int sigIdx, int ctx = 0) {
    detail::check(chorusPutSignal(data.data(), data.size(), dataTypeOf<T>(), peer, win, peerOffset, sigIdx, ctx, 0,
                                  comm_, nullptr),
                  comm_);
  }
  void signal(int peer, int sigIdx, int ctx = 0) {
    detail::check(chorusSignal(peer, sigIdx, ctx, 0, comm_, nullptr), comm_);
  }
  void waitSignal(std::span<const chorusWaitSignalDesc_t> descs) {
    detail::check(chorusWaitSignal(static_cast<int>(descs.size()), descs.data(), comm_, nullptr), comm_);
  }
  // Receives exactly data.size() elements from `peer`'s send().
  template <class T>
  void recv(std::span<T> data, int peer, chorusStream_t stream = nullptr) {
    detail::check(chorusRecv(data.data(), data.size(), dataTypeOf<T>(), peer, comm_, stream), comm_);
  }
  // Block j of send (size() blocks of send.size() / size() elements) lands as block rank() of rank j's recv.
  template <class T>
  void allToAll(std::span<const T> send, std::span<T> recv, chorusStream_t stream = nullptr) {
    sameLength(send.size(), recv.size(), "allToAll");
    const size_t n = static_cast<size_t>(size());
    if (send.size() % n != 0) {
      throw Exception(chorusInvalidArgument, "chorus::Communicator::allToAll: " + std::to_string(send.size()) +
                                                 " elements do not split into " + std::to_string(n) + " blocks");
    }
    detail::check(chorusAllToAll(send.data(), recv.data(), send.size() / n, dataTypeOf<T>(), comm_, stream), comm_);
  }
  // As MPI_Alltoallv: per-peer counts and displacements in elements (size() of each).
  template <class T>
  void allToAllv(std::span<const T> send, std::span<const size_t> sendCounts, std::span<const size_t> sendDispls,
                 std::span<T> recv, std::span<const size_t> recvCounts, std::span<const size_t> recvDispls,
                 chorusStream_t stream = nullptr) {
    const size_t n = static_cast<size_t>(size());
    for (size_t s : {sendCounts.size(), sendDispls.size(), recvCounts.size(), recvDispls.size()}) {
      sameLength(s, n, "allToAllv (counts and displacements per rank)");
    }
    for (size_t p = 0; p < n; ++p) {
      if (sendCounts[p] > 0 && sendDispls[p] + sendCounts[p] > send.size()) outOfRange("allToAllv", "send", p);
      if (recvCounts[p] > 0 && recvDispls[p] + recvCounts[p] > recv.size()) outOfRange("allToAllv", "recv", p);
    }
    detail::check(chorusAllToAllv(send.data(), sendCounts.data(), sendDispls.data(), recv.data(), recvCounts.data(),
                                  recvDispls.data(), dataTypeOf<T>(), comm_, stream), comm_);
  }
  // root's recv (size() * send.size() elements) = every rank's send, in rank order (recv is ignored elsewhere).
  template <class T>
  void gather(std::span<const T> send, std::span<T> recv, int root, chorusStream_t stream = nullptr) {
    if (rank() == root) sameLength(send.size() * static_cast<size_t>(size()), recv.size(), "gather");
    detail::check(chorusGather(send.data(), recv.data(), send.size(), dataTypeOf<T>(), root, comm_, stream), comm_);
  }
  // recv = block rank() of root's send (size() * recv.size() elements; ignored elsewhere).
  template <class T>
  void scatter(std::span<const T> send, std::span<T> recv, int root, chorusStream_t stream = nullptr) {
    if (rank() == root) sameLength(recv.size() * static_cast<size_t>(size()), send.size(), "scatter");
    detail::check(chorusScatter(send.data(), recv.data(), recv.size(), dataTypeOf<T>(), root, comm_, stream), comm_);
  }
  // Returns once every rank has entered.
  void barrier(chorusStream_t stream = nullptr) { detail::check(chorusBarrier(comm_, stream), comm_); }
  // MPI_Comm_split: the ranks passing one color form a communicator, ranked by key (then by rank here); fields left
  // empty in `config` take this communicator's settings. CHORUS_SPLIT_NOCOLOR: no communicator (std::nullopt).
  std::optional<Communicator> split(int color, int key, const Config& config = {}) {
    chorusConfig_t c = config.toC();
    chorusComm_t child = nullptr;
    detail::check(chorusCommSplit(comm_, color, key, &child, &c), comm_);
    if (child == nullptr) return std::nullopt;
    return Communicator(child);
  }
  // chorusCommShrink: a communicator of the ranks that go on. `exclude` empty with CHORUS_SHRINK_ABORT: the ranks
  // whose processes are gone, as the callers agree; otherwise those listed (the same list on every caller).
  Communicator shrink(std::span<const int> exclude, int flags, const Config& config = {}) {
    chorusConfig_t c = config.toC();
    chorusComm_t child = nullptr;
    const bool agree = exclude.empty() && flags == CHORUS_SHRINK_ABORT;
    detail::check(chorusCommShrink(comm_, agree ? nullptr : exclude.data(), static_cast<int>(exclude.size()), &child,
                                   &c, flags),
                  nullptr);
    return Communicator(child);
  }
  // chorusCommGetUniqueId on rank 0: the id new processes grow this communicator with.
  chorusUniqueId growId() const {
    chorusUniqueId id;
    detail::check(chorusCommGetUniqueId(comm_, &id), comm_);
    return id;
  }
  // chorusCommGrow by a rank of this communicator (rank 0 passes growId(); the others' id is not read).
  Communicator grow(int newRanks, const chorusUniqueId* id, const Config& config = {}) {
    chorusConfig_t c = config.toC();
    chorusComm_t grown = nullptr;
    detail::check(chorusCommGrow(comm_, newRanks, id, -1, &grown, &c), nullptr);
    return Communicator(grown);
  }
  // chorusCommGrow by a new process: rank `rank` of the grown communicator.
  static Communicator joinGrown(int newRanks, const chorusUniqueId& id, int rank, const Config& config = {}) {
    chorusConfig_t c = config.toC();
    chorusComm_t grown = nullptr;
    detail::check(chorusCommGrow(nullptr, newRanks, &id, rank, &grown, &c), nullptr);
    return Communicator(grown);
  }

 private:
  explicit Communicator(chorusComm_t c) : comm_(c) {}
  [[noreturn]] static void outOfRange(const char* call, const char* side, size_t peer) {
    throw Exception(chorusInvalidArgument, std::string("chorus::Communicator::") + call + ": " + side +
                                               " block for rank " + std::to_string(peer) + " runs past the buffer");
  }
  static void sameLength(size_t a, size_t b, const char* call) {
    if (a != b) {
      throw Exception(chorusInvalidArgument, std::string("chorus::Communicator::") + call + ": buffer lengths " +
                                                 std::to_string(a) + " and " + std::to_string(b) + " do not match");
    }
  }
  chorusComm_t comm_ = nullptr;
};

}  // namespace chorus
