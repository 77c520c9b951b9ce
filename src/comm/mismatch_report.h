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

  // Publishes this rank's description of call `seq`; then, when `e` is a mismatch or a peer giving up, waits up to
  // `waitSeconds` for every rank's description. Returns chorusInvalidUsage listing who called what when they
  // differ, else `e` unchanged. Never throws: a store that is gone only loses the listing.
  Error explain(const Error& e, uint64_t seq, const std::string& description, double waitSeconds);

 private:
  std::string key(uint64_t seq, int rank) const;

  StoreClient& store_;
  std::string prefix_;
  int rank_, size_;
};

}  // namespace chorus
