// Drives a call's connections until what it waits for is done, bounded by the call's deadline and by abort, and
// watching for lost peers. Idle, it spins briefly, then yields, then sleeps in poll (WaitPolicy), so that
// oversubscribed ranks leave the CPU.
#pragma once

#include <poll.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <vector>

#include "core/error.h"
#include "device/poll_backoff.h"
#include "src/comm/call_under_way.h"
#include "src/comm/peer_liveness.h"
#include "src/comm/side_progress.h"
#include "src/comm/transfer_tracer.h"
#include "src/comm/wait_policy.h"

namespace chorus {

class ProgressDriver {
 public:
  ProgressDriver(int rank, std::vector<std::unique_ptr<Connection>>& conns, CallUnderWay& call, TransferTracer& tracer,
                 WaitPolicy wait, const std::atomic<bool>& aborted, int wakeFd)
      : rank_(rank), call_(call), tracer_(tracer), wait_(wait), aborted_(aborted), wakeFd_(wakeFd), liveness_(conns) {}

  // Progresses the call's busy connections until finished() holds. A lost peer's error names every other rank
  // that vanished too.
  template <class Pred>
  void driveUntil(Pred finished) {
    try {
      driveLoop(finished);
    } catch (const Error& e) {
      if (e.code() != chorusRemoteError) throw;
      liveness_.throwNamingOthersLost(e);
      throw;
    }
  }

  // Progressed once per round beside the call's connections (the communicator's windows); null: none.
  void setSideProgress(SideProgress* side) { side_ = side; }

  // For waits that do not progress connections (a receive from any peer): throws on abort, and on a lost peer or
  // the deadline.
  void throwIfAborted() const {
    if (aborted_.load(std::memory_order_relaxed)) abortedNow();
  }
  void throwIfLostOrLate() {
    liveness_.checkNow();
    throwIfLate();
  }

 private:
  // A receive waiting for this many bytes stops the spinning (and from kNoYieldBytes the yielding too): see
  // driveLoop.
  static constexpr size_t kNoSpinBytes = 64 << 10, kNoYieldBytes = 256 << 10;

  template <class Pred>
  void driveLoop(Pred finished);
  void sleepUntilSomethingMoves();
  void throwIfLate() {
    if (call_.deadline.get().expired()) timedOut();
  }
  [[noreturn, gnu::cold, gnu::noinline]] void timedOut() const;
  [[noreturn, gnu::cold, gnu::noinline]] void abortedNow() const;  // chorusCommAbort: the call fails, named

  int rank_;
  CallUnderWay& call_;  // the CommIO's
  TransferTracer& tracer_;
  const WaitPolicy wait_;
  const std::atomic<bool>& aborted_;
  int wakeFd_;
  PeerLiveness liveness_;
  std::vector<pollfd> fds_;    // sleepUntilSomethingMoves'
  PollBackoff deviceBackoff_;  // how long to sleep while only a device copy can move things on
  SideProgress* side_ = nullptr;
};

template <class Pred>
void ProgressDriver::driveLoop(Pred finished) {
  int idle = 0;
  tracer_.loopStarts();
  for (unsigned round = 1;; ++round) {
    tracer_.roundStarts();
    bool moved = false;
    for (const ActiveConnection& a : call_.active) {
      if (a.conn->busy()) moved |= a.conn->progress();
    }
    if (side_) moved |= side_->progressSide();
    tracer_.roundEnds(moved);
    if (finished()) return;
    throwIfAborted();
    if ((round & 255) == 0) {
      liveness_.checkNowAndThen();
      throwIfLate();
    }
    if (moved) {
      idle = 0;
      deviceBackoff_.reset();
      continue;
    }
    // Spinning and yielding pay for latency-bound waits. While a large receive is in flight, sleeping until much of
    // it has arrived moves the same bytes with fewer, larger copies: from kNoSpinBytes no spinning, from
    // kNoYieldBytes no yielding either (each round of yields costs a sendmsg, a recvmsg and a sched_yield for a few
    // KiB). Figures: perf/results/tcp.md, "Waiting for a large receive".
    size_t pending = 0;
    for (const ActiveConnection& a : call_.active) pending = std::max(pending, a.conn->pendingReceiveBytes());
    const int spin = pending >= kNoSpinBytes ? 0 : wait_.spinRounds;
    const int yields = pending >= kNoYieldBytes ? 0 : wait_.yieldRounds;
    if (++idle < spin) continue;
    if (idle < spin + yields) {
      sched_yield();
      continue;
    }
    throwIfLate();
    tracer_.sleeps();
    sleepUntilSomethingMoves();
    idle = spin;  // after a wakeup, yield a little before sleeping again
  }
}

}  // namespace chorus
