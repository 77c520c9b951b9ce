#include "src/comm/call_failures.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>

#include "core/comm_config.h"
#include "src/comm/call_description.h"

namespace chorus {

CallFailures::~CallFailures() {
  if (wakeFd_ >= 0) close(wakeFd_);
}

void CallFailures::openWakeDescriptor(const std::string& who) {
  wakeFd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wakeFd_ < 0) throwSystemError(who, "eventfd", errno);
}

void CallFailures::abort() {
  state_.abort();
  if (metrics_ != nullptr) metrics_->aborted();
  uint64_t one = 1;
  ssize_t ignored = write(wakeFd_, &one, sizeof(one));
  (void)ignored;
}

void CallFailures::listMismatchesThrough(StoreClient& store, const std::string& keyPrefix, int rank, int size) {
  mismatchReport_ = std::make_unique<MismatchReport>(store, keyPrefix, rank, size);
}

Error CallFailures::failCall(const Error& raw, const CallArgs& op, bool deviceCall, uint64_t collectiveNumber) {
  // Transport errors know the peer but not the call: add it.
  const std::string name = describeCall(op);
  std::string what = raw.what();
  if (what.find(name) == std::string::npos) what += " (during " + name + ")";
  Error e = raw.withMessage(withCommName(commName_, what));
  const bool breaks = state_.wouldBreak(e, deviceCall);
  if (breaks) {
    // Peers may be blocked waiting on us: tell them now rather than let them run into their timeout.
    abandonConnections(e.lostPeer());
    if (mismatchReport_ && state_.aborted()) {
      // No listing (the caller asked to stop now), but the peers that list this call must not wait for us.
      mismatchReport_->publish(collectiveNumber, Failure::kAborted, name, kAbortPublishSeconds);
    } else if (mismatchReport_) {
      // A listing for collectives only: a point-to-point call's would be its pair's, not every rank's.
      if (op.peer < 0) {
        e = mismatchReport_->explain(e, collectiveNumber, name, kMismatchListingWaitSeconds);
      } else {
        mismatchReport_->publish(collectiveNumber, e.failure(), name, kMismatchListingWaitSeconds);
      }
      e = e.withMessage(withCommName(commName_, e.what()));
    }
  }
  state_.record(e, breaks);
  if (metrics_ != nullptr) metrics_->failed(e, breaks);
  return e;
}

void CallFailures::abandonConnections(int lostPeer) {
  for (auto* conns : {deviceConns_, hostConns_}) {
    if (conns == nullptr) continue;
    for (auto& c : *conns) {
      if (c) c->abandon(lostPeer);
    }
  }
}

void CallFailures::closeConnections(std::vector<std::unique_ptr<Connection>>& conns) const {
  for (auto& c : conns) {
    if (!c) continue;
    if (state_.unusable()) {
      c->abandon();
    } else {
      c->closeGracefully();
    }
  }
}

}  // namespace chorus
