// A communicator: its peers' connections, staging memory, and the calls made on it, one at a time.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "algorithms/collective.h"
#include "algorithms/selector.h"
#include "src/bootstrap/launch_spec.h"
#include "src/bootstrap/store.h"
#include "src/comm/comm_io.h"
#include "src/comm/staging_memory.h"
#include "transports/connection.h"

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
  void connect(const LaunchSpec& spec, Deadline deadline);
  uint32_t tagFor(const Op& op) const;

  int rank_, size_;
  int localRanks_ = 1;  // ranks on this host (this one included): more than the cores means no spinning
  double timeoutSeconds_;
  std::unique_ptr<StoreServer> storeServer_;
  std::unique_ptr<StoreClient> store_;
  std::vector<std::unique_ptr<Connection>> conns_;
  std::unique_ptr<StagingMemory> staging_;
  std::unique_ptr<Selector> selector_;
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
