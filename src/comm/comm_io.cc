#include "src/comm/comm_io.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "src/comm/call_description.h"
#include "core/error.h"
#include "device/poll_backoff.h"

namespace chorus {

WaitPolicy WaitPolicy::forRanksOnMachine(int localRanks) {
  // Yields before sleeping with a core per rank: about a millisecond when nothing else wants the core. Sleeping
  // costs a doorbell and a wakeup (tens of us here): with 200 a 1 MiB ping-pong slept on every message (122 us
  // against 48 with 2000).
  constexpr int kYields = 2000;
  constexpr int kOversubscribedYields = 64;
  // Oversubscribed hosts (more ranks than cores) must not spin: the peer they wait for needs the core. Yielding (as
  // Open MPI's yield_when_idle does) lets the peer run at once; sleeping in poll would add a doorbell and a wakeup
  // to every step.
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  const bool oversubscribed = localRanks > cores;
  return oversubscribed ? WaitPolicy{2, kOversubscribedYields} : WaitPolicy{200, kYields};
}

CommIO::CommIO(int rank, int size, std::vector<std::unique_ptr<Connection>>& conns, StagingMemory& staging,
               Reducer& reducer, WaitPolicy wait, const std::atomic<bool>& aborted, int wakeFd)
    : rank_(rank),
      size_(size),
      conns_(conns),
      staging_(staging),
      sliceBytes_(staging.sliceBytes()),
      reducer_(reducer),
      wait_(wait),
      aborted_(aborted),
      wakeFd_(wakeFd) {}

void CommIO::begin(const CallTags& tags, LazyDeadline deadline, const CallArgs* op) {
  tags_ = &tags;
  deadline_ = deadline;
  op_ = op;
  compressor_.begin(op, size_, deviceApi_ == nullptr);
  singleCopyHint_ = false;
  stripeWidth_ = 0;
  active_.clear();
  times_.clear();
  postedBytes_ = 0;
}

void CommIO::setTrace(CallTrace* trace, std::vector<const char*> transportNames) {
  trace_ = trace != nullptr && trace->level() == TraceLevel::kTransfer ? trace : nullptr;
  transportNames_ = std::move(transportNames);
}

void CommIO::TimedReducer::reduce(void* dst, const void* a, const void* b, size_t count, chorusDataType_t type,
                                  chorusRedOp_t op) {
  const double start = CallTrace::nowUs();
  inner_.reduce(dst, a, b, count, type, op);
  times_.reduceUs += CallTrace::nowUs() - start;
}

void CommIO::TimedReducer::finishAverage(void* data, size_t count, chorusDataType_t type, int nranks) {
  const double start = CallTrace::nowUs();
  inner_.finishAverage(data, count, type, nranks);
  times_.reduceUs += CallTrace::nowUs() - start;
}

template <class Drive>
void CommIO::traced(const char* what, int peer, size_t bytes, Drive drive) {
  const double start = CallTrace::nowUs();
  step_ = TransferStep{};
  timing_ = true;
  struct Off {
    bool& timing;
    ~Off() { timing = false; }
  } off{timing_};
  drive();
  const double end = CallTrace::nowUs();
  // What driveLoop did not see (the first check, the return) counts as moving: the step's parts add up to it.
  step_.what = what;
  step_.peer = peer;
  step_.bytes = bytes;
  step_.transport = peer >= 0 && static_cast<size_t>(peer) < transportNames_.size() ? transportNames_[peer] : "";
  step_.startUs = start;
  step_.endUs = end;
  step_.moveUs = std::max(0.0, end - start - step_.waitUs);
  times_.waitUs += step_.waitUs;
  times_.moveUs += step_.moveUs;
  trace_->recordTransfer(step_);
}

void CommIO::beginUntracked(uint32_t tag, LazyDeadline deadline) {
  tags_ = nullptr;
  untrackedTag_ = tag;
  deadline_ = deadline;
  op_ = nullptr;
  compressor_.begin(nullptr, size_, true);
  singleCopyHint_ = false;
  stripeWidth_ = 0;
  active_.clear();
  times_.clear();
}

void CommIO::badPeer(int peer) const {
  throwInternal(errorContext(rank_, callName()) + ": addressed rank " + std::to_string(peer));
}

CommIO::ActiveConnection& CommIO::activate(int peer) {
  if (peer < 0 || peer >= size_ || !conns_[peer]) badPeer(peer);
  Connection* c = conns_[peer].get();
  for (ActiveConnection& a : active_) {
    if (a.conn == c) return a;
  }
  return active_.emplace_back(ActiveConnection{c, c->capabilities()});
}

Connection* CommIO::sendingTo(int peer, size_t bytes) {
  const ActiveConnection& a = activate(peer);
  if (a.caps.singleCopy != nullptr) a.caps.singleCopy->setSingleCopyHint(singleCopyHint_);
  if (a.caps.striping != nullptr) a.caps.striping->setStripeWidth(stripeWidth_);
  postedBytes_ += bytes;
  return a.conn;
}

Request CommIO::sendCompressed(Connection* c, int peer, const char* packed, size_t compressedSize, size_t bytes) {
  const uint64_t id = c->isend(packed, compressedSize, sendTag(peer));
  compressor_.sent(c, id);
  return Request{c, true, id, bytes};
}

Request CommIO::isend(int peer, const void* buf, size_t bytes) {
  Connection* c = sendingTo(peer, bytes);
  if (compressor_.compresses(peer, bytes)) {
    size_t compressedSize = 0;
    const char* packed = compressor_.encodeSend(buf, bytes, &compressedSize);
    return sendCompressed(c, peer, packed, compressedSize, bytes);
  }
  return Request{c, true, c->isend(buf, bytes, sendTag(peer)), bytes};
}

Request CommIO::irecv(int peer, void* buf, size_t bytes) {
  const ActiveConnection& a = activate(peer);
  Connection* c = a.conn;
  if (a.caps.striping != nullptr) a.caps.striping->setStripeWidth(stripeWidth_);
  postedBytes_ += bytes;
  if (compressor_.compresses(peer, bytes)) {
    size_t compressedSize = 0;
    char* packed = compressor_.receiveBuffer(buf, bytes, &compressedSize);
    const uint64_t id = c->irecv(packed, compressedSize, recvTag(peer));
    compressor_.received(c, id);
    return Request{c, false, id, bytes};
  }
  return Request{c, false, c->irecv(buf, bytes, recvTag(peer)), bytes};
}

void CommIO::copy(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  const double start = trace_ != nullptr ? CallTrace::nowUs() : 0;
  if (deviceApi_ == nullptr) {
    std::memmove(dst, src, bytes);
  } else {
    deviceApi_->copyAsync(dst, src, bytes, deviceStream_);
    deviceApi_->synchronize(deviceStream_);
  }
  if (trace_ != nullptr) times_.moveUs += CallTrace::nowUs() - start;
}

std::string CommIO::callName() const { return op_ ? describeCall(*op_) : std::string("a call"); }

bool CommIO::done(const Request& r) {
  return r.isSend ? r.conn->sendsDone() > r.id : r.conn->recvsDone() > r.id;
}

void CommIO::timedOut() {
  // Name the peers this rank is still waiting on: those are the ranks that never arrived (or are stuck).
  std::string waiting;
  for (const ActiveConnection& a : active_) {
    if (a.conn->busy()) waiting += (waiting.empty() ? "" : ", ") + std::to_string(a.conn->peer());
  }
  throw Error(chorusTimeout, errorContext(rank_, callName()) + ": timed out (CHORUS_TIMEOUT) waiting on rank(s) " +
                                 (waiting.empty() ? "none" : waiting));
}

void CommIO::abortedNow() {
  throw Error(chorusRemoteError, errorContext(rank_, callName()) + ": aborted by chorusCommAbort", Failure::kAborted);
}

size_t CommIO::addHangupWatch() {
  size_t from = pollFds_.size();
  hangupOwner_.clear();
  for (auto& c : conns_) {
    if (!c) continue;
    size_t before = pollFds_.size();
    c->addHangupFds(pollFds_);
    hangupOwner_.insert(hangupOwner_.end(), pollFds_.size() - before, c.get());
  }
  return from;
}

void CommIO::reportHangups(size_t from) {
  for (size_t i = from; i < pollFds_.size(); ++i) {
    if (pollFds_[i].revents & (POLLRDHUP | POLLHUP | POLLERR)) hangupOwner_[i - from]->checkAlive();
  }
}

std::vector<int> CommIO::otherLostPeers(int except) {
  // When one rank dies its neighbours may fail and exit too; naming every hung-up peer lets the user see
  // the whole picture instead of only the first loss this rank happened to notice.
  pollFds_.clear();
  size_t from = addHangupWatch();
  std::vector<int> lost;
  if (::poll(pollFds_.data(), pollFds_.size(), 0) <= 0) return lost;
  for (size_t i = from; i < pollFds_.size(); ++i) {
    Connection* c = hangupOwner_[i - from];
    if (!(pollFds_[i].revents & (POLLRDHUP | POLLHUP | POLLERR)) || c->peer() == except) continue;
    try {
      c->checkAlive();
    } catch (const Error& e) {
      // A peer that gave up is alive: the rank it lost, if it says, is the lost one.
      const int gone = e.lostPeer();
      if (gone == kNoRank || gone == except) continue;
      if (std::find(lost.begin(), lost.end(), gone) == lost.end()) lost.push_back(gone);
    }
  }
  std::sort(lost.begin(), lost.end());
  return lost;
}

int CommIO::waitForAnySender(const CallTags& tags, chorusDataType_t type) {
  for (int p = 0; p < size_; ++p) {
    if (p == rank_ || activate(p).caps.peeking != nullptr) continue;
    throw Error(chorusInvalidUsage, errorContext(rank_, p, callName()) + ": the connection (" +
                                        connectionTo(p)->describe() +
                                        ") cannot receive from any peer; name the source");
  }
  PollBackoff backoff;
  for (unsigned round = 1;; ++round) {
    for (int i = 0; i < size_; ++i) {
      const int p = (nextAnySender_ + i) % size_;
      uint32_t tag = 0;
      if (p == rank_) continue;
      if (!activate(p).caps.peeking->peekIncomingTag(&tag) || tag != tags.nextRecvTag(p, type)) continue;
      nextAnySender_ = (p + 1) % size_;
      return p;
    }
    if (aborted_.load(std::memory_order_relaxed)) abortedNow();
    if ((round & 15) == 0) {
      checkPeersAlive();
      if (deadline_.get().expired()) timedOut();
    }
    backoff.pause();  // yields, then sleeps growing to a millisecond: a receive from any peer is rare and patient
  }
}

void CommIO::checkPeersAlive() {
  // Any rank's death shows as a hang-up on its connection to every other rank (the connections form a full
  // mesh), so even ranks that are not waiting on the lost one hear of it at once instead of at the timeout.
  pollFds_.clear();
  size_t from = addHangupWatch();
  if (::poll(pollFds_.data(), pollFds_.size(), 0) > 0) reportHangups(from);
}

void CommIO::sleepUntilSomethingMoves() {
  pollFds_.clear();
  pollFds_.push_back(pollfd{wakeFd_, POLLIN, 0});
  bool device = false;
  for (const auto& [c, caps] : active_) {
    if (!c->busy()) continue;
    c->addPollFds(pollFds_);
    device |= caps.descriptorless != nullptr && caps.descriptorless->movesWithoutDescriptor();
  }
  size_t from = addHangupWatch();
  // Capped so that abort and the deadline are seen promptly even if a wakeup is missed. A device copy's end wakes
  // no descriptor: then sleep in short, growing periods (microseconds at first, a millisecond at most).
  const int capMs = deadline_.get().remainingMs(50);
  timespec period{capMs / 1000, (capMs % 1000) * 1000000L};
  if (device) {
    const timespec backoff = deviceBackoff_.nextSleep();
    if (capMs > 0) period = backoff;  // backoff never exceeds a millisecond, so never the cap
  }
  int r = ::ppoll(pollFds_.data(), pollFds_.size(), &period, nullptr);
  if (r < 0 && errno != EINTR) throwSystemError(errorContext(rank_, callName()), "ppoll", errno);
  if (r > 0) reportHangups(from);
}

template <class Pred>
void CommIO::driveUntil(Pred finished) {
  try {
    driveLoop(finished);
  } catch (const Error& e) {
    if (e.code() != chorusRemoteError) throw;
    const std::vector<int> lost = otherLostPeers(kNoRank);
    if (lost.empty()) throw;
    std::string ranks;
    for (int r : lost) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
    throw Error(e.code(), std::string(e.what()) + "; vanished without a goodbye: rank(s) " + ranks, Failure::kPeerLost,
                e.lostPeer() != kNoRank ? e.lostPeer() : lost.front());
  }
}

template <class Pred>
void CommIO::driveLoop(Pred finished) {
  int idle = 0;
  double mark = timing_ ? CallTrace::nowUs() : 0;  // traced: the end of the last progress round
  for (unsigned round = 1;; ++round) {
    double roundStart = 0;
    if (timing_) {
      roundStart = CallTrace::nowUs();
      step_.waitUs += roundStart - mark;  // spinning, yielding or asleep since the last round: waiting
    }
    bool moved = false;
    for (const ActiveConnection& a : active_) {
      if (a.conn->busy()) moved |= a.conn->progress();
    }
    if (timing_) {
      mark = CallTrace::nowUs();
      if (!moved) step_.waitUs += mark - roundStart;  // a round that moved nothing waited too
      ++step_.rounds;
      if (moved) ++step_.movingRounds;
    }
    if (finished()) return;
    if (aborted_.load(std::memory_order_relaxed)) abortedNow();
    if ((round & 255) == 0) {
      auto now = Deadline::Clock::now();
      if (now - lastLivenessCheck_ > std::chrono::milliseconds(100)) {
        lastLivenessCheck_ = now;
        checkPeersAlive();
      }
      if (deadline_.get().expired()) timedOut();
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
    for (const ActiveConnection& a : active_) pending = std::max(pending, a.conn->pendingReceiveBytes());
    const int spin = pending >= kNoSpinBytes ? 0 : wait_.spinRounds;
    const int yields = pending >= kNoYieldBytes ? 0 : wait_.yieldRounds;
    if (++idle < spin) continue;
    if (idle < spin + yields) {
      sched_yield();
      continue;
    }
    if (deadline_.get().expired()) timedOut();
    if (timing_) ++step_.sleeps;
    sleepUntilSomethingMoves();
    idle = spin;  // after a wakeup, yield a little before sleeping again
  }
}

void CommIO::waitUndecoded(const Request& r) {
  if (trace_ == nullptr) {
    driveUntil([&] { return done(r); });
  } else {
    traced(r.isSend ? "send" : "recv", r.conn->peer(), r.bytes, [&] { driveUntil([&] { return done(r); }); });
    postedBytes_ -= std::min(postedBytes_, r.bytes);
  }
}

void CommIO::wait(const Request& r) {
  waitUndecoded(r);
  if (!r.isSend && compressor_.active()) compressor_.expand(r.conn, r.id);
}

void CommIO::waitAndReduce(const Request& r, const void* landing, void* out, const void* with, size_t count,
                           chorusDataType_t type, chorusRedOp_t op) {
  waitUndecoded(r);
  reduceArrived(r, landing, out, with, count, type, op);
}

Request CommIO::waitReduceAndSend(const Request& r, const void* landing, void* out, const void* with, size_t count,
                                  chorusDataType_t type, chorusRedOp_t op, int peer) {
  waitUndecoded(r);
  const size_t bytes = count * typeSize(type);
  if (!r.isSend && compressibleSum(type, op) && compressor_.compresses(peer, bytes)) {
    const double start = trace_ != nullptr ? CallTrace::nowUs() : 0;
    size_t compressedSize = 0;
    if (const char* packed = compressor_.expandAddingEncoded(r.conn, r.id, with, out, &compressedSize)) {
      if (trace_ != nullptr) times_.reduceUs += CallTrace::nowUs() - start;  // the encoding counts as reducing
      return sendCompressed(sendingTo(peer, bytes), peer, packed, compressedSize, bytes);
    }
  }
  reduceArrived(r, landing, out, with, count, type, op);
  return isend(peer, out, bytes);
}

void CommIO::reduceArrived(const Request& r, const void* landing, void* out, const void* with, size_t count,
                           chorusDataType_t type, chorusRedOp_t op) {
  if (!r.isSend && compressor_.active()) {
    if (compressibleSum(type, op)) {
      const double start = trace_ != nullptr ? CallTrace::nowUs() : 0;
      if (compressor_.expandAdding(r.conn, r.id, with, out)) {
        if (trace_ != nullptr) times_.reduceUs += CallTrace::nowUs() - start;
        return;
      }
    }
    compressor_.expand(r.conn, r.id);
  }
  reducer().reduce(out, landing, with, count, type, op);
}

void CommIO::exchange(int peer, const void* send, void* recv, size_t bytes) {
  if (compressor_.compresses(peer, bytes)) {  // encoded and decoded around the plain posts
    PeerIO::exchange(peer, send, recv, bytes);
    return;
  }
  Connection* c = connectionTo(peer);
  auto both = [&] {
    uint64_t sendId = 0, recvId = 0;
    if (c->exchange(send, recv, bytes, sendTag(peer), recvTag(peer), &sendId, &recvId)) return;
    driveUntil([&] { return done(Request{c, false, recvId}); });
    driveUntil([&] { return done(Request{c, true, sendId}); });
  };
  if (trace_ == nullptr) {
    both();
    return;
  }
  traced("exchange", peer, 2 * bytes, both);
}

void CommIO::waitAll() {
  auto all = [&] {
    driveUntil([&] {
      for (const ActiveConnection& a : active_) {
        if (a.conn->busy()) return false;
      }
      return true;
    });
  };
  if (trace_ == nullptr || postedBytes_ == 0) {  // nothing left unwaited: no step worth an event
    all();
  } else {
    traced("wait_all", -1, postedBytes_, all);
    postedBytes_ = 0;
  }
  if (compressor_.active()) compressor_.expandAll();
}

}  // namespace chorus
