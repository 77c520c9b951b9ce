// A communicator: its peers' connections, staging memory, and the calls made on it, one at a time.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "algorithms/collective.h"
#include "algorithms/hierarchical/hierarchy.h"
#include "algorithms/selector.h"
#include "src/bootstrap/launch_spec.h"
#include "src/bootstrap/store.h"
#include "src/comm/comm_io.h"
#include "src/comm/mismatch_report.h"
#include "src/comm/staging_memory.h"
#include "transports/connection.h"
#include "topology/global_topology.h"
#include "topology/link_model.h"
#include "transports/peer_info.h"

namespace chorus {

class Communicator {
 public:
  // Rendezvous through the store, connect to every peer, allocate staging; bounded by CHORUS_TIMEOUT.
  explicit Communicator(const LaunchSpec& spec);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

  // Runs one collective to completion. On failure records the error (last error; async error when the
  // communicator can no longer be used) and rethrows it.
  void run(const Op& op);
  // Makes a call blocked in run() throw promptly; the caller then destroys the communicator.
  void requestAbort();
  // Blocks until no call is running (used before freeing after an abort).
  void waitIdle();
  // True while a call is running on this communicator (for tests that must abort a blocked call).
  bool callInProgress();

  chorusResult_t asyncError() const { return asyncError_.load(); }
  // The last error message on this communicator ("" if none); valid until the next error.
  const char* lastError();
  // Records an error found by the C API before the call reached run() (bad arguments).
  void recordError(const std::string& message);

 private:
  // Connects to every peer; returns every rank's card (this rank's included).
  std::vector<PeerCard> connect(const LaunchSpec& spec, Deadline deadline);
  // Every rank's placement into the global view, the link model (probed when CHORUS_TOPO_PROBE=1), the hosts.
  void learnTopology(const std::vector<PeerCard>& cards, Deadline deadline);
  // The selector and each level's decision table for this world.
  void planSelection(const std::string& sameHostTransport, size_t sliceBytes);
  // The transport between this rank and the others of its host ("shm", "tcp"; "shm" when it is alone).
  std::string sameHostTransport(const std::vector<PeerCard>& cards) const;
  uint32_t tagFor(const Op& op) const;

  int rank_, size_;
  int localRanks_ = 1;  // ranks on this host (this one included): more than the cores means no spinning
  double timeoutSeconds_;
  std::unique_ptr<StoreServer> storeServer_;
  std::unique_ptr<StoreClient> store_;
  std::unique_ptr<MismatchReport> mismatchReport_;  // null when CHORUS_CHECK_MISMATCH=0
  std::vector<std::unique_ptr<Connection>> conns_;
  std::unique_ptr<StagingMemory> staging_;
  std::unique_ptr<Selector> selector_;
  Hierarchy hierarchy_;
  std::unique_ptr<GlobalTopology> world_;
  LinkModel links_;
  // How long a failed call waits for the other ranks' descriptions of it (they fail within ms of each other; a rank
  // that completed its side never sends one).
  static constexpr double kMismatchListingWaitSeconds = 0.5;
  static constexpr int kOversubscribedYields = 64;  // before sleeping; see the constructor
  static constexpr uint32_t kProbeTag = 0xfffffff0;  // the link probe's frames (at init, before any call)
  std::unique_ptr<DecisionTable> intraHostTable_, interHostTable_;  // flat choices for each level
  std::unique_ptr<CommIO> io_;
  uint64_t seq_ = 0;
  std::mutex callMutex_;
  std::atomic<bool> aborted_{false};
  int wakeFd_ = -1;
  std::atomic<chorusResult_t> asyncError_{chorusSuccess};
  std::string brokenBecause_;  // set once a failure leaves connections out of step
  std::mutex errorMutex_;
  std::string lastError_;
};

}  // namespace chorus
