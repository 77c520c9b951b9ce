#include "src/comm/progress_driver.h"

#include <time.h>

#include <cerrno>
#include <string>

#include "core/deadline_wait.h"

namespace chorus {

void ProgressDriver::timedOut() const {
  // Name the peers this rank is still waiting on: those are the ranks that never arrived (or are stuck).
  std::vector<int> waiting;
  for (const ActiveConnection& a : call_.active) {
    if (a.conn->busy()) waiting.push_back(a.conn->peer());
  }
  throw Error(chorusTimeout, errorContext(rank_, call_.name()) + ": timed out (CHORUS_TIMEOUT) waiting on rank(s) " +
                                 (waiting.empty() ? "none" : formatRankList(waiting)));
}

void ProgressDriver::abortedNow() const {
  throw Error(chorusRemoteError, errorContext(rank_, call_.name()) + ": aborted by chorusCommAbort", Failure::kAborted);
}

void ProgressDriver::sleepUntilSomethingMoves() {
  fds_.clear();
  fds_.push_back(pollfd{wakeFd_, POLLIN, 0});
  bool device = false;
  int firstWaited = -1, waited = 0;
  for (const auto& [c, caps] : call_.active) {
    if (!c->busy()) continue;
    if (waited++ == 0) firstWaited = c->peer();
    c->addPollFds(fds_);
    device |= caps.descriptorless != nullptr && caps.descriptorless->movesWithoutDescriptor();
  }
  if (side_) side_->addSidePollFds(fds_);
  // Only a wait that sleeps is recorded: the flight recorder's "waiting for rank X" costs the spinning nothing.
  if (call_.flight != nullptr) call_.flight->waiting(call_.flightRecord, firstWaited, waited);
  const size_t from = liveness_.watch(fds_);
  // Capped so that abort and the deadline are seen promptly even if a wakeup is missed. A device copy's end wakes
  // no descriptor: then sleep in short, growing periods (microseconds at first, a millisecond at most).
  const int capMs = call_.deadline.get().remainingMs(50);
  timespec period{capMs / 1000, (capMs % 1000) * 1000000L};
  if (device) {
    const timespec backoff = deviceBackoff_.nextSleep();
    if (capMs > 0) period = backoff;  // backoff never exceeds a millisecond, so never the cap
  }
  const int r = ::ppoll(fds_.data(), fds_.size(), &period, nullptr);
  if (r < 0 && errno != EINTR) throwSystemError(errorContext(rank_, call_.name()), "ppoll", errno);
  if (r > 0) liveness_.report(fds_, from);
}

}  // namespace chorus
