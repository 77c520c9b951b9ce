// Turns "a peer sent something else" into "which ranks called what": after a failed call every rank publishes
// its own description of the call in the store; a rank whose failure looks like a mismatch collects them all.
#pragma once

#include <string>

#include "core/bootstrap/store.h"
#include "core/error.h"

namespace chorus {

class MismatchReport {
 public:
  // keyPrefix: this communicator's namespace in the store (shared with other communicators of the job).
  MismatchReport(StoreClient& store, std::string keyPrefix, int rank, int size);

  // Publishes this rank's description of call `seq`, the call it failed in, and how it failed; then, when `e` is a
  // mismatch or a peer giving up, waits up to `waitSeconds` for every rank's description of the call it failed in.
  // Returns chorusInvalidUsage listing who called what (and who failed in another call) when they differ; `e` with
  // the cause added when it only heard a peer give up and a peer says why (it timed out, was aborted); else `e`
  // unchanged. Called once per communicator (the first failure). Never throws: a store that is gone only loses the
  // listing.
  Error explain(const Error& e, uint64_t seq, const std::string& description, double waitSeconds);
  // Only publishes (a failed point-to-point call: its listing would be its pair's, not every rank's; an aborted
  // call: the caller asked to stop now; but the ranks listing a collective must not wait for this one). Never
  // throws.
  void publish(uint64_t seq, Failure failure, const std::string& description, double waitSeconds);

 private:
  std::string key(int rank) const;
  void publish(uint64_t seq, Failure failure, const std::string& description, const Deadline& deadline);

  StoreClient& store_;
  std::string prefix_;
  int rank_, size_;
};

}  // namespace chorus
