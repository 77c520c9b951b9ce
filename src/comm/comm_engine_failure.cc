// What a failed call leaves behind: the error it throws, the peers told at once, the listing of what each rank
// called, and the communicator's failure state (failure_state.h).
#include "src/comm/call_description.h"
#include "src/comm/comm_engine.h"

namespace chorus {

Error CommEngine::failCall(const Error& raw, const Op& op, bool deviceCall) {
  // Transport errors know the peer but not the call: add it.
  const std::string name = describeCall(op);
  std::string what = raw.what();
  if (what.find(name) == std::string::npos) what += " (during " + name + ")";
  Error e = raw.withMessage(named(what));
  const bool breaks = failures_.wouldBreak(e, deviceCall);
  if (breaks) {
    // Peers may be blocked waiting on us: tell them now rather than let them run into their timeout.
    if (deviceResources_) {
      for (auto& c : deviceResources_->conns) {
        if (c) c->abandon(e.lostPeer());
      }
    }
    for (auto& c : conns_) {
      if (c) c->abandon(e.lostPeer());
    }
    if (mismatchReport_ && failures_.aborted()) {
      // No listing (the caller asked to stop now), but the peers that list this call must not wait for us.
      mismatchReport_->publish(callTags_->collectiveNumber(), Failure::kAborted, name, kAbortPublishSeconds);
    } else if (mismatchReport_) {
      // A listing for collectives only: a point-to-point call's would be its pair's, not every rank's.
      if (op.peer < 0) {
        e = mismatchReport_->explain(e, callTags_->collectiveNumber(), name, kMismatchListingWaitSeconds);
      } else {
        mismatchReport_->publish(callTags_->collectiveNumber(), e.failure(), name, kMismatchListingWaitSeconds);
      }
      e = e.withMessage(named(e.what()));
    }
  }
  failures_.record(e, breaks);
  return e;
}

}  // namespace chorus
