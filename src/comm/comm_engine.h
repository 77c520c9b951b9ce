// The engine behind a communicator handle (chorusComm_t): its peers' connections, staging memory, and the calls
// made on it, one at a time; a composition of parts that each own one concern (peer_connections.h, call_runner.h,
// call_failures.h, device_side.h, comm_family.h). (Not chorus.hpp's chorus::Communicator, which wraps a handle.)
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "algorithms/hierarchical/hierarchy.h"
#include "core/bootstrap/launch_spec.h"
#include "core/bootstrap/store.h"
#include "core/collective.h"
#include "core/comm_config.h"
#include "device/device_api.h"
#include "src/comm/call_failures.h"
#include "src/comm/call_order.h"
#include "src/comm/call_runner.h"
#include "src/comm/comm_family.h"
#include "src/comm/comm_io.h"
#include "src/comm/comm_metrics.h"
#include "src/comm/device_side.h"
#include "src/comm/device_windows.h"
#include "src/comm/peer_connections.h"
#include "src/comm/staging_memory.h"
#include "src/comm/window_channel.h"
#include "src/flight/comm_flight.h"

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
  void run(const CallArgs& op) { runBatch(std::span<const CallArgs>(&op, 1)); }
  // Runs a batch of calls on host buffers (a group's calls on this communicator) as run() does one: its sends and
  // receives first, posted together and completed together, then its collectives in call order.
  void runBatch(std::span<const CallArgs> ops);
  // Host calls run in the order they were issued (call_order.h): a call queued on a host stream takes its
  // number when queued, and later runs (or is skipped) with it; every issued number must be run or skipped.
  uint64_t issueHostCall() { return order_->issue(); }
  // With passTurn false the caller passes the turn on itself (passIssued), once it has recorded the call as done:
  // a host stream, so that a call issued after this one never finishes before the stream knows this one has.
  void runIssued(uint64_t number, std::span<const CallArgs> ops, bool passTurn = true);
  void skipIssued(uint64_t number, bool passTurn = true);
  void passIssued(uint64_t number) { order_->pass(number); }
  // Names this communicator alike on every rank (its job and key prefix): groups spanning communicators run
  // their parts in this order on every rank.
  const std::string& identity() const { return family_.identity(); }
  // Split (chorusCommSplit): makes this rank's child communicator over `members` (ranks of this one, in the child's
  // rank order) named by `color`, through this communicator's store; the members call it together. Every rank of
  // this communicator calls nextSplit() once per split, so the numbers agree.
  uint64_t nextSplit() { return family_.nextSplit(); }
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
  void enqueueDevice(const CallArgs& op, DeviceStream stream, int device) {
    enqueueDeviceBatch(std::span<const CallArgs>(&op, 1), stream, device);
  }
  // As enqueueDevice, for a group's calls on this communicator (run together, as runBatch runs host calls).
  void enqueueDeviceBatch(std::span<const CallArgs> ops, DeviceStream stream, int device) {
    CallerCount inside(activeCallers_);
    device_.enqueue(ops, stream, device);
  }
  // The device API chosen at init (CHORUS_DEVICE_EMULATION): where the C API locates buffers.
  DeviceApi& deviceApi() const { return device_.api(); }
  // chorusCommRegister: registers [p, p+bytes) with every connection that keeps regions for what it sends (ib),
  // until deregisterBuffer(handle); the handle is never null. Takes the call lock: no call may run meanwhile.
  void* registerBuffer(const void* p, size_t bytes);
  void deregisterBuffer(void* handle);
  // Windows (chorus.h's put and signal; window_channel.h): each runs in host call order under the call lock, after
  // the device calls enqueued before it. Registration and deregistration are collective; the first registration
  // connects the window connections. Errors are thrown as chorus::Error.
  // The window lives until deregisterWindow or the communicator's end; `owner` is kept in it for the caller.
  // onDevice: base is device memory (device_windows.h: every rank's must be, each reached by CUDA IPC).
  Window* registerWindow(void* base, size_t bytes, const void* owner, bool onDevice = false);
  void deregisterWindow(Window* win);
  // chorusWindowFlush: returns once every put this rank made (NULL stream, or run by a host stream) is complete at
  // its target.
  void flushWindows();
  // Puts, signals and waits, in order (a group's, or one call's).
  void runWindowOps(std::span<const WindowOp> ops) { runWindowIssued(issueHostCall(), ops); }
  // As runIssued, for window ops (a host stream's).
  void runWindowIssued(uint64_t number, std::span<const WindowOp> ops, bool passTurn = true);
  // Puts, signals and waits on CUDA stream `stream` with device windows: enqueued on it, in order, at once.
  void runDeviceWindowOps(std::span<const WindowOp> ops, DeviceStream stream);
  // How puts reach each transport's peers ("shm direct, tcp messages"); "" before the first registration.
  std::string windowPaths();
  // Makes a call blocked in run() throw promptly; the caller then destroys the communicator.
  void requestAbort();
  // Blocks until no call is running, no caller is inside run() or enqueueDevice() and no call queued on a host
  // stream is left (used before freeing; after an abort they all return promptly).
  void waitIdle();
  // True while a call is running on this communicator (for tests that must abort a blocked call).
  bool callInProgress();
  // The flight recorder (chorusCommDumpFlightRecord, chorusCommFlightRecord, the metrics).
  CommFlight& flight() { return flight_; }

  chorusResult_t asyncError() const { return failures_.state().asyncError(); }
  // The last error message on this communicator ("" if none); valid until the next error.
  const char* lastError() const { return failures_.state().lastError(); }
  // Records an error found by the C API before the call reached run() (bad arguments).
  void recordError(const std::string& message) { failures_.state().recordMessage(message); }
  // The algorithm of the last collective this communicator ran ("" before any, and after point-to-point calls):
  // what a tool reports beside its timings (chorus-perf's summary).
  const char* lastAlgorithm() const { return calls_.lastAlgorithm(); }
  size_t lastSliceBytes() const { return calls_.lastSliceBytes(); }
  // The transports that reach this rank's peers, distinct, in the order of the ranks they first reach ("shm",
  // "shm,tcp"); "" for a world of one.
  std::string transportsInUse() const { return peers_.transportsInUse(); }

 private:
  // A split child that shares `parent`'s connections, call order and lock, store and (same slice size) staging memory.
  struct SharingParent {};
  CommEngine(SharingParent, CommEngine& parent, const std::vector<int>& members, const LaunchSpec& spec,
             CommConfig config);
  // What both constructors share once the connections and staging are in place: the host CommIO,
  // compression, topology, trace, the call planner and its tuned table.
  void finishSetup(Deadline deadline);
  // config metricsPort: this communicator's metrics, served on the port + its rank's index on its machine.
  void startMetrics();
  // Runs f(WindowWaiting) as window call `number` (registerWindow's comment); `call` names it in errors.
  template <class F>
  void windowCall(uint64_t number, bool passTurn, const char* call, F f);
  // A split child or shrunk successor over `members` (ranks of this one): over this one's connections (`share`),
  // or over connections of its own, made through the same store.
  std::unique_ptr<CommEngine> makeRelative(const std::vector<int>& members, const LaunchSpec& spec, bool share,
                                           CommConfig config);
  // Callers inside that hold no turn of the host call order (device enqueues): waitIdle waits for them. A caller
  // that holds a turn needs no count: the order is not idle until the turn has passed on, and passing it is the
  // last thing the caller touches (call_order.h); a count would cost two locked instructions a call.
  struct CallerCount {
    explicit CallerCount(std::atomic<int>& n) : count(n) { count.fetch_add(1); }
    ~CallerCount() { count.fetch_sub(1); }
    std::atomic<int>& count;
  };

  const CommConfig config_;
  const int rank_, size_;
  CommFamily family_;      // the launch spec, splits and shrinks: what relatives are made from
  CommFlight flight_;      // its last calls, for chorus-inspect and the dumps (before calls_, which records in it)
  PeerConnections peers_;  // the store, every rank's card, the connections
  // Shared with children of the same slice size (they share the call lock).
  std::shared_ptr<StagingMemory> staging_;
  // Counted by the call runner and the failures (config metricsPort; null: off); outlives both.
  std::unique_ptr<CommMetrics> metrics_;
  WaitPolicy waitPolicy_;  // the CommIOs', host and device
  CallFailures failures_;  // refusal once unusable, failed calls, abort (its wake descriptor outlives every CommIO)
  Hierarchy hierarchy_;    // the host grouping two-level algorithms use
  std::unique_ptr<CommIO> io_;  // host calls'
  CallRunner calls_;            // numbering, planner, trace, compression agreement
  // The order host calls run in, and the call lock: shared by a communicator and the children that share its
  // connections, so that calls made on the family in the same order on every rank run in that order everywhere,
  // whichever stream or thread made them, and one at a time on the connections.
  std::shared_ptr<CallOrder> order_ = std::make_shared<CallOrder>();
  std::atomic<int> activeCallers_{0};
  WindowChannel windows_{rank_};  // its connections open at the first registration
  DeviceWindows deviceWindows_{rank_, size_};  // device memory's windows; its counters made at the first
  DeviceSide device_;  // last: torn down first, its progress thread using all the above
};

}  // namespace chorus
