// The engine behind a communicator handle (chorusComm_t): its peers' connections, staging memory, and the calls
// made on it, one at a time. (Not the public C++ chorus::Communicator of chorus.hpp, which wraps a handle.)
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "core/collective.h"
#include "algorithms/hierarchical/hierarchy.h"
#include "algorithms/selection/call_planner.h"
#include "core/bootstrap/launch_spec.h"
#include "core/bootstrap/store.h"
#include "src/comm/call_trace.h"
#include "src/comm/comm_io.h"
#include "device/device_call_queue.h"
#include "src/comm/device_resources.h"
#include "src/comm/failure_state.h"
#include "src/comm/host_call_order.h"
#include "src/comm/mismatch_report.h"
#include "src/comm/staging_memory.h"
#include "core/comm_config.h"
#include "device/device_api.h"
#include "transports/connection.h"
#include "transports/transport_registry.h"
#include "topology/global_topology.h"
#include "topology/link_model.h"
#include "core/bootstrap/peer_card.h"

namespace chorus {

class CommEngine {
 public:
  // Rendezvous through the store, connect to every peer, allocate staging; bounded by config.timeoutSeconds.
  // Every setting comes from `config` (resolved by the caller); none is read from the environment here.
  // sharedStore: a store server this communicator keeps alive (a split child shares its parent's).
  CommEngine(const LaunchSpec& spec, CommConfig config, std::shared_ptr<StoreServer> sharedStore = nullptr);
  ~CommEngine();
  CommEngine(const CommEngine&) = delete;
  CommEngine& operator=(const CommEngine&) = delete;

  int rank() const { return rank_; }
  const CommConfig& config() const { return config_; }
  // "comm NAME: " + message, or the message alone for an unnamed communicator: every error it reports goes
  // through this, so that a job with several communicators can tell them apart.
  std::string named(const std::string& message) const;
  int size() const { return size_; }

  // Runs one call on host buffers to completion, after every device call enqueued before it. On failure records
  // the error (last error; async error when the communicator can no longer be used) and rethrows it.
  void run(const Op& op) { runBatch(std::span<const Op>(&op, 1)); }
  // Runs a batch of calls on host buffers (a group's calls on this communicator) as run() does one: its sends and
  // receives first, posted together and completed together, then its collectives in call order.
  void runBatch(std::span<const Op> ops) { runIssued(issueHostCall(), ops); }
  // Host calls run in the order they were issued (host_call_order.h): a call queued on a host stream takes its
  // number when queued, and later runs (or is skipped) with it; every issued number must be run or skipped.
  uint64_t issueHostCall() { return hostOrder_->issue(); }
  // With passTurn false the caller passes the turn on itself (passIssued), once it has recorded the call as done:
  // a host stream, so that a call issued after this one never finishes before the stream knows this one has.
  void runIssued(uint64_t number, std::span<const Op> ops, bool passTurn = true);
  void skipIssued(uint64_t number, bool passTurn = true);
  void passIssued(uint64_t number) {
    CallerCount inside(activeCallers_);  // waitIdle may not let the communicator go while the turn is passed on
    hostOrder_->pass(number);
  }
  // Names this communicator alike on every rank (its job and key prefix): groups spanning communicators run
  // their parts in this order on every rank.
  const std::string& identity() const { return identity_; }
  // Split (chorusCommSplit): makes this rank's child communicator over `members` (ranks of this one, in the child's
  // rank order) named by `color`, through this communicator's store; the members call it together. Every rank of
  // this communicator calls nextSplit() once per split, so the numbers agree.
  uint64_t nextSplit() { return splits_++; }
  std::unique_ptr<CommEngine> makeChild(const std::vector<int>& members, int color, uint64_t split, CommConfig config);
  // Shrink (chorusCommShrink): this rank's communicator over the ranks that go on, agreed with them through the
  // store (shrink_agreement.h): those not in `excluded`, or (excluded null) those not gone. abortFirst: this
  // communicator's pending calls are aborted first (it may have failed), otherwise they finish first. A healthy
  // communicator's connections are shared with the new one (as a split's are); after a failure it connects anew.
  std::unique_ptr<CommEngine> shrink(const std::vector<int>* excluded, bool abortFirst, CommConfig config);
  // Grow (chorusCommGrow): the id that new processes join with (rank 0 makes it): this communicator's store, a fresh
  // key prefix and this communicator's size.
  chorusUniqueId growId() const;
  // This rank's communicator over these ranks and `newRanks` joiners, this rank keeping its number. Every rank calls
  // it; rank 0's id is sent to the others (theirs may be null).
  std::unique_ptr<CommEngine> grow(const chorusUniqueId* id, int newRanks, CommConfig config);
  // A joiner's side: rank `rank` of size(id's communicator) + newRanks.
  static std::unique_ptr<CommEngine> joinGrown(const chorusUniqueId& id, int newRanks, int rank, CommConfig config);
  // Enqueues a collective on device buffers of GPU `device` behind the work on `stream` and returns (NCCL's
  // stream semantics: work enqueued on the stream afterwards sees the result). Failures of the call itself are
  // reported through asyncError() and fail later calls; this throws only when nothing could be enqueued.
  void enqueueDevice(const Op& op, DeviceStream stream, int device) {
    enqueueDeviceBatch(std::span<const Op>(&op, 1), stream, device);
  }
  // As enqueueDevice, for a group's calls on this communicator (run together, as runBatch runs host calls).
  void enqueueDeviceBatch(std::span<const Op> ops, DeviceStream stream, int device);
  // The device API chosen at init (CHORUS_DEVICE_EMULATION): where the C API locates buffers.
  DeviceApi& deviceApi() const { return *deviceApi_; }
  // chorusCommRegister: registers [p, p+bytes) with every connection that keeps regions for what it sends (ib),
  // until deregisterBuffer(handle); the handle is never null. Takes the call mutex: no call may run meanwhile.
  void* registerBuffer(const void* p, size_t bytes);
  void deregisterBuffer(void* handle);
  // Makes a call blocked in run() throw promptly; the caller then destroys the communicator.
  void requestAbort();
  // Blocks until no call is running, no caller is inside run() or enqueueDevice() and no call queued on a host
  // stream is left (used before freeing; after an abort they all return promptly).
  void waitIdle();
  // True while a call is running on this communicator (for tests that must abort a blocked call).
  bool callInProgress();

  chorusResult_t asyncError() const { return failures_.asyncError(); }
  // The last error message on this communicator ("" if none); valid until the next error.
  const char* lastError() const { return failures_.lastError(); }
  // Records an error found by the C API before the call reached run() (bad arguments).
  void recordError(const std::string& message) { failures_.recordMessage(message); }
  // The algorithm of the last collective this communicator ran ("" before any, and after point-to-point calls):
  // what a tool reports beside its timings (chorus-perf's summary).
  const char* lastAlgorithm() const { return lastAlgorithm_.load(std::memory_order_relaxed); }
  // The transports that reach this rank's peers, distinct, in the order of the ranks they first reach ("shm",
  // "shm,tcp"); "" for a world of one.
  std::string transportsInUse() const;

 private:
  // A split child that shares `parent`'s connections, call mutex, store and (same slice size) staging memory.
  struct SharingParent {};
  CommEngine(SharingParent, CommEngine& parent, const std::vector<int>& members, const LaunchSpec& spec,
             CommConfig config);
  // Whether a child with `config` can share this communicator's connections: the settings that shaped them agree.
  bool canShareWith(const CommConfig& config) const;
  // The parts both constructors share: the engine's own wake descriptor and idle policy, the CommIO, topology and
  // selection, once the connections, cards and staging are in place. Closes wakeFd_ on failure.
  void finishSetup(Deadline deadline);
  // Connects to every peer; returns every rank's card (this rank's included).
  std::vector<PeerCard> connect(const LaunchSpec& spec, Deadline deadline);
  // Every rank's placement into the global view, the link model (probed when CHORUS_TOPO_PROBE=1), the hosts.
  void learnTopology(const std::vector<PeerCard>& cards, Deadline deadline);
  // The trace (config traceDir): its file, each machine's clock offset to rank 0's (measured with the ranks that
  // trace on other machines than rank 0's, as their cards say), and CommIO's transfer tracing.
  void startTrace(Deadline deadline);
  // Writes the trace, if any; a failure is logged, never thrown (it runs at destroy).
  void flushTrace() noexcept;
  // CHORUS_COMPRESSION: which links carry float32 at 16 bits (network ones, or all with ":all").
  void configureWireCompression();
  // With compression on for `o`: an allgather or broadcast made in place (the input copied into the output), so
  // that every final value a rank sends is one it may round to what its peers receive; otherwise `o`.
  const Op& wireInPlace(const Op& o);
  // After a compressed allreduce, allgather or broadcast: the results' significands rounded as the wire rounds
  // them, so that the ranks agree bit for bit. A sender already keeps what it sends (it rounds in place), but a
  // value may reach one rank over a compressed link and stay unrounded on another: the rank that computed it last
  // (a ring's owner of a block, a non-power-of-two world's folded ranks), or one behind a full-precision link.
  // Values already rounded are read, not written. Only where it is needed: see configureWireCompression.
  void agreeAfterWire(const Op& o);
  // The world's cost inputs and the call planner (algorithms/selection/call_planner.h) built on them.
  // sameHostOverNetwork: ranks of one host talk over the network (a transport list without shm).
  void planCalls(bool sameHostOverNetwork);
  // CHORUS_AUTOTUNE_FILE (comm_engine_autotune.cc): rank 0's table, loaded on every rank.
  void loadAutotuneFile(Deadline deadline);
  // Replaces every rank's `times` with their average over the ranks, call by call (an allreduce through `io`).
  void agreeTimes(std::vector<double>& times, CommIO& io);
  // CHORUS_AUTOTUNE_FILE, by rank 0 at destroy; a failure is logged, never thrown.
  void writeAutotuneFile() noexcept;
  // What carries bytes between ranks of one host, the same answer on every rank (a rank alone on its host must not
  // plan with other costs than the rest: the ranks would choose different algorithms and wait on each other): the
  // transport of the first two ranks of each host with several, network if any of those is.
  static TransportMedium sameHostMedium(const std::vector<PeerCard>& cards,
                                        const std::vector<ChosenTransport>& transports);
  // Runs a batch of calls (runBatch) on the CommIO that prepare() returns (it may wait and build), under
  // the call mutex, with the bookkeeping every call shares: sequence numbers, refusal once broken, error recording.
  void execute(std::span<const Op> requests, const std::function<CommIO&()>& prepare, bool deviceCall);
  // What a failed call throws (comm_engine_failure.cc): `raw` with the call and communicator named; at the
  // communicator's first failure the peers are told at once (the connections abandoned) and, where the ranks may
  // have called different things, the listing of what each called; recorded in failures_.
  Error failCall(const Error& raw, const Op& op, bool deviceCall);
  // Whether device calls on `device` block their caller (config deviceCalls; auto: where holding the caller's
  // stream is unsafe, DeviceApi::streamHoldHazard).
  bool deviceCallsBlock(int device);
  // The progress thread's side of a device call (DeviceCallQueue::Runner).
  void runDeviceCall(std::span<const Op> ops, int device, const std::function<void()>& waitReady);
  // The device resources, made (collectively, over the host connections) at the first device call.
  DeviceResources& deviceResources(int device);
  // Stops the device progress thread after its queue, then closes and frees the device resources.
  void shutDownDevice();

  const CommConfig config_;
  int rank_, size_;
  std::string identity_;
  int localRanks_ = 1;  // ranks on this host (this one included): more than the cores means no spinning
  double timeoutSeconds_;  // config_.timeoutSeconds
  LaunchSpec spec_;  // how this communicator found its peers (a child finds its own through the same store)
  std::shared_ptr<StoreServer> storeServer_;
  uint64_t splits_ = 0;
  uint64_t shrinks_ = 0;  // every caller of chorusCommShrink counts alike, so each shrink's keys agree
  std::shared_ptr<StoreClient> store_;  // shared with the children that share this one's connections
  std::vector<PeerCard> cards_;         // every rank's card, as connect() learnt them
  std::unique_ptr<CallTags> callTags_;  // what each call's frames carry (one call at a time: under the call mutex)
  std::unique_ptr<MismatchReport> mismatchReport_;  // null when config_.checkMismatch is off
  std::vector<std::unique_ptr<Connection>> conns_;
  std::vector<TransportId> peerTransports_;  // [p]: the transport of conns_[p]
  TransportMedium sameHostMedium_ = TransportMedium::kSharedMemory;  // sameHostMedium() at connect
  std::vector<bool> sameMachine_;  // [p]: rank p runs on this physical machine (CUDA IPC can reach it)
  std::shared_ptr<StagingMemory> staging_;  // shared with children of the same slice size (they share the call mutex)
  std::unique_ptr<CallPlanner> planner_;  // how each call runs
  Hierarchy hierarchy_;
  std::unique_ptr<GlobalTopology> world_;
  LinkModel links_;
  // How long a failed call waits for the other ranks' descriptions of the calls they failed in. They fail within
  // ms of each other on an idle machine, but 0.5 s was too short with two jobs on two cores (CI: a torch job beside
  // PyTorch's own suite). The whole wait is spent only where a rank is in no call at all (one that completed its
  // side fails in its next call and says so), and never where a peer was lost (no listing is made then).
  static constexpr double kMismatchListingWaitSeconds = 2.0;
  static constexpr double kAbortPublishSeconds = 0.25;  // an aborted call's description: a store round trip at most
  static constexpr int kOversubscribedYields = 64;  // before sleeping; see the constructor
  // Yields before sleeping with a core per rank: about a millisecond when nothing else wants the core. Sleeping costs
  // a doorbell and a wakeup (tens of us here); at 200 a 1 MiB ping-pong slept on every message (122 us, now 48).
  static constexpr int kYields = 2000;
  std::unique_ptr<CommIO> io_;
  std::unique_ptr<CallTrace> trace_;  // null: not tracing
  uint64_t seq_ = 0;
  std::vector<Op> batch_;                // the batch being run, numbered (under the call mutex)
  std::vector<const Op*> pointToPoint_;  // its sends and receives (under the call mutex)
  std::vector<char> fusionBuffer_;       // a batch's fused allreduces (grows, never shrinks; under the call mutex)
  Op fused_;                             // the allreduce running for them (named in messages)
  Op wireOp_;                            // wireInPlace's call (under the call mutex)
  bool wireAgreementPass_ = false;       // agreeAfterWire rounds the results (configureWireCompression says when)
  // The call mutex: one call at a time holds it. A communicator and the children that share its connections share
  // it (their calls take turns, as those of one communicator do).
  std::shared_ptr<std::mutex> callMutex_ = std::make_shared<std::mutex>();
  // Callers inside run() or enqueueDevice(): a host call waits for the device queue without holding the call mutex.
  std::atomic<int> activeCallers_{0};
  struct CallerCount {
    explicit CallerCount(std::atomic<int>& n) : count(n) { count.fetch_add(1); }
    ~CallerCount() { count.fetch_sub(1); }
    std::atomic<int>& count;
  };
  // The order host calls run in: shared by a communicator and the children that share its connections, so that
  // calls made on the family in the same order on every rank run in that order everywhere, whichever stream or
  // thread made them.
  std::shared_ptr<HostCallOrder> hostOrder_ = std::make_shared<HostCallOrder>();
  int wakeFd_ = -1;
  std::atomic<const char*> lastAlgorithm_{""};  // a static name (algorithmName); set by the call runner
  FailureState failures_;  // aborted, broken, the async and last errors
  int spinRounds_ = 200, yieldRounds_ = 200;  // CommIO's idle policy, for the device CommIO too
  DeviceApi* deviceApi_ = nullptr;
  std::mutex enqueueMutex_;  // device calls from several threads enqueue one at a time
  int device_ = -1;          // the GPU of the first device call; later ones must use the same
  std::unique_ptr<DeviceResources> deviceResources_;
  std::unique_ptr<DeviceCallQueue> deviceQueue_;  // made at the first device call; its thread uses the above
};

}  // namespace chorus
