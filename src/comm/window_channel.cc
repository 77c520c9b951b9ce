#include "src/comm/window_channel.h"

#include <poll.h>
#include <sched.h>

#include <cerrno>
#include <cstring>
#include <tuple>

#include "core/error.h"
#include "core/logging.h"
#include "transports/reserved_tags.h"
#include "transports/transport_registry.h"

namespace chorus {

namespace {
constexpr uint32_t kTag = reserved_tags::kWindow;
// Side progress visits the window connections every this many progress rounds of another call: often enough that
// puts land while the target works, rarely enough that a call's own rounds do not pay a syscall per peer each.
constexpr unsigned kSideEvery = 8;
}  // namespace

WindowChannel::~WindowChannel() {
  for (auto& c : peers_.conns()) {
    if (c) c->closeGracefully();
  }
}

void WindowChannel::open(PeerConnections peers) {
  peers_ = std::move(peers);
  state_.assign(peers_.conns().size(), Peer{});
  shmPeers_.assign(state_.size(), false);
  for (size_t p = 0; p < state_.size(); ++p) {
    Connection* c = peers_.conns()[p].get();
    if (!c) continue;
    state_[p].conn = c;
    state_[p].writes = c->capabilities().peerWrites;
    state_[p].rdma = c->capabilities().windowRdma;
    shmPeers_[p] = p < peers_.transports().size() && peers_.transports()[p] == TransportId::kShm;
    armHeader(state_[p]);
  }
  open_ = true;
  CHORUS_INFO(rank_, "windows: puts travel by " << describe());
}

std::string WindowChannel::describe() const {
  std::string out;
  for (const Peer& p : state_) {
    if (!p.conn) continue;
    std::string what = std::string(p.conn->describe()).substr(0, std::string(p.conn->describe()).find(' '));
    what += p.rdma ? " rdma write" : p.writes ? " direct" : " messages";
    if (out.find(what) == std::string::npos) out += (out.empty() ? "" : ", ") + what;
  }
  const std::string shared = shm_ ? shm_->describe() : "";
  if (!shared.empty()) out += (out.empty() ? "" : ", ") + shared;
  return out.empty() ? "none (one rank)" : out;
}

std::vector<uint64_t> WindowChannel::shmAnnounce(const void* base, size_t bytes, int nranks) {
  if (!shm_) shm_ = std::make_unique<ShmWindowPath>(rank_, nranks);
  return shm_->announce(base, bytes);
}

void WindowChannel::shmAttach(const Window& win, std::span<const uint64_t> all) {
  if (shm_) shm_->attach(win, all, shmPeers_);
}

void WindowChannel::forget(Window* win) {
  if (shm_) shm_->detach(win->id);
  unexpose(win->exposed);
  table_.remove(win);
}

void WindowChannel::countLanded(int peer) {
  Peer& p = state_[static_cast<size_t>(peer)];
  ++p.landed;
  if (shm_) shm_->landed(peer, p.landed);
}

void WindowChannel::armHeader(Peer& p) {
  p.inPayload = false;
  p.recvId = p.conn->irecv(&p.in, sizeof(p.in), kTag);
}

void WindowChannel::invalid(int peer, const std::string& what) const {
  throw Error(chorusInvalidUsage, errorContext(rank_, peer, "window put") + ": " + what);
}

// The frame in p.in is complete: checks it against this rank's windows, then receives its bytes (or, stored
// directly or none, raises its signal at once).
void WindowChannel::land(int peer) {
  Peer& p = state_[static_cast<size_t>(peer)];
  const WindowFrame& f = p.in;
  if (f.magic != kWindowFrameMagic) invalid(peer, "a frame with a bad magic on the window connection");
  if (f.flags & kWakeOnly) {  // its work was done when it woke this rank
    armHeader(p);
    return;
  }
  if (f.windowId != kNoWindow) {
    // A peer may put as soon as its registration returns, before this rank's has: the frame waits for it (and
    // with it every later frame from that peer, which keeps their order).
    p.parked = table_.notYetRegistered(f.windowId);
    if (p.parked) return;
    Window* win = table_.find(f.windowId);
    const uint64_t size = win ? win->sizes[static_cast<size_t>(rank_)] : 0;
    if (!win || f.offset > size || f.bytes > size - f.offset) {
      invalid(peer, std::to_string(f.bytes) + " bytes at offset " + std::to_string(f.offset) + " of window " +
                        std::to_string(f.windowId) +
                        (win ? " (" + std::to_string(size) + " bytes here)" : " (not registered here)"));
    }
    if (f.flags & kInlined) {
      if (f.bytes > WindowFrame::kInlineBytes) invalid(peer, "an inlined put of " + std::to_string(f.bytes) + " bytes");
      std::memcpy(static_cast<char*>(win->base) + f.offset, f.inlined, f.bytes);
    } else if (f.bytes > 0 && !(f.flags & kStoredDirectly)) {
      p.inPayload = true;
      p.recvId = p.conn->irecv(static_cast<char*>(win->base) + f.offset, f.bytes, kTag);
      return;
    }
  }
  table_.raise(peer, f.sigIdx, f.ctx);
  countLanded(peer);
  armHeader(p);
}

bool WindowChannel::advance(int peer) {
  Peer& p = state_[static_cast<size_t>(peer)];
  bool landed = false;
  if (p.parked) {
    if (table_.notYetRegistered(p.in.windowId)) return raiseWritten(peer);
    land(peer);
    landed = true;
  }
  // Signals written by RDMA (ib) count once the frames that came before them have landed.
  for (;;) {
    landed |= raiseWritten(peer);
    if (p.parked || p.conn->recvsDone() <= p.recvId) break;
    if (p.inPayload) {
      table_.raise(peer, p.in.sigIdx, p.in.ctx);
      countLanded(peer);
      armHeader(p);
    } else {
      land(peer);
    }
    landed = true;
  }
  return landed;
}

bool WindowChannel::progressAll() {
  bool moved = false;
  for (size_t q = 0; q < state_.size(); ++q) {
    Peer& p = state_[q];
    if (!p.conn || p.failed) continue;
    try {
      moved |= p.conn->progress();
      moved |= advance(static_cast<int>(q));
    } catch (const Error& e) {
      CHORUS_INFO(rank_, "windows: the window connection to rank " << q << " failed: " << e.what());
      p.failed = std::current_exception();
    } catch (...) {
      p.failed = std::current_exception();
    }
  }
  return moved;
}

bool WindowChannel::progressSide() {
  if (!open_ || ((++sideRounds_ % kSideEvery) != 0 && !sideWoken_)) return false;
  sideWoken_ = false;
  return progressAll();
}

void WindowChannel::addSidePollFds(std::vector<pollfd>& fds) {
  if (!open_) return;
  sideWoken_ = true;
  for (const Peer& p : state_) {
    if (p.conn && !p.failed) p.conn->addPollFds(fds);
  }
}

WindowChannel::Peer& WindowChannel::peerFor(int peer, const WindowWaiting&) {
  Peer& p = state_[static_cast<size_t>(peer)];
  if (p.failed) std::rethrow_exception(p.failed);
  return p;
}

template <class Pred>
void WindowChannel::driveUntil(Pred done, int peer, const WindowWaiting& waiting) {
  std::vector<pollfd> fds;
  std::vector<std::tuple<size_t, size_t, size_t>> hangups;
  for (unsigned idle = 0;;) {
    const bool moved = progressAll();
    if (done()) return;
    if (peer >= 0) peerFor(peer, waiting);
    if (waiting.aborted->load(std::memory_order_relaxed)) {
      throw Error(chorusRemoteError, errorContext(rank_, waiting.call) + ": aborted by chorusCommAbort",
                  Failure::kAborted);
    }
    if (moved) {
      idle = 0;
      continue;
    }
    ++idle;
    const unsigned spin = static_cast<unsigned>(waiting.policy.spinRounds);
    const unsigned yields = spin + static_cast<unsigned>(waiting.policy.yieldRounds);
    if (idle < spin) continue;
    // Checked now and then while yielding, and before every sleep.
    if ((idle >= yields || (idle & 63) == 0) && waiting.deadline.expired()) {
      throw Error(chorusTimeout, errorContext(rank_, peer, waiting.call) +
                                     ": timed out (CHORUS_TIMEOUT) waiting on the window connection" +
                                     (peer >= 0 ? " to rank " + std::to_string(peer) : std::string()));
    }
    if (idle < yields) {
      sched_yield();
      continue;
    }
    // Sleep until a window connection has something, or hangs up (a peer gone without a goodbye: shared memory
    // learns it only from its socket), at most a millisecond.
    // A sender that raises a counter while this rank sleeps sends a wake-up frame (shm_window_path.h): the flag
    // goes up before the last look.
    if (shm_) shm_->sleeping(true);
    struct Awake {
      ShmWindowPath* shm;
      ~Awake() {
        if (shm) shm->sleeping(false);
      }
    } awake{shm_.get()};
    if (done()) return;
    fds.clear();
    for (const Peer& p : state_) {
      if (p.conn && !p.failed) p.conn->addPollFds(fds);
    }
    hangups.clear();  // (peer, first descriptor, end)
    for (size_t q = 0; q < state_.size(); ++q) {
      const Peer& p = state_[q];
      if (!p.conn || p.failed) continue;
      const size_t first = fds.size();
      p.conn->addHangupFds(fds);
      hangups.push_back({q, first, fds.size()});
    }
    if (::poll(fds.data(), fds.size(), 1) < 0 && errno != EINTR) {
      throw Error(chorusSystemError, errorContext(rank_, waiting.call) + ": poll: " + std::strerror(errno));
    }
    for (const auto& [q, first, end] : hangups) {
      bool hungUp = false;
      for (size_t i = first; i < end; ++i) hungUp |= (fds[i].revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
      if (!hungUp) continue;
      try {
        state_[q].conn->checkAlive();
      } catch (...) {
        state_[q].failed = std::current_exception();
      }
    }
    idle = spin;  // after a wakeup, yield a little before sleeping again
  }
}

void WindowChannel::waitFor(const std::function<bool()>& done, int peer, const WindowWaiting& waiting) {
  driveUntil(done, peer, waiting);
}

void WindowChannel::sendFrame(int peer, const WindowFrame& frame, const void* bytes, const WindowWaiting& waiting) {
  Peer& p = peerFor(peer, waiting);
  uint64_t last = p.conn->isend(&frame, sizeof(frame), kTag);
  if (frame.bytes > 0 && !(frame.flags & (kStoredDirectly | kInlined))) {
    last = p.conn->isend(bytes, frame.bytes, kTag);
  }
  if (!(frame.flags & kWakeOnly)) ++p.sent;  // a wake-up is not counted: it lands nothing
  // Complete locally: the frame (on the caller's stack) and the bytes may go. Receives go on meanwhile, so two
  // ranks putting to each other at once both land what the other sends.
  driveUntil([&] { return p.conn->sendsDone() > last; }, peer, waiting);
}

void WindowChannel::put(const Window& win, int peer, const void* src, uint64_t bytes, uint64_t offset, uint32_t sigIdx,
                        uint32_t ctx, const WindowWaiting& waiting) {
  if (peer == rank_) {
    if (bytes > 0) std::memmove(static_cast<char*>(win.base) + offset, src, bytes);
    table_.raise(peer, sigIdx, ctx);
    return;
  }
  Peer& p = peerFor(peer, waiting);
  if (p.rdma && putByRdma(win, peer, src, bytes, offset, sigIdx, ctx, waiting)) return;
  WindowFrame frame{.magic = kWindowFrameMagic,
                    .sigIdx = sigIdx,
                    .ctx = ctx,
                    .flags = 0,
                    .windowId = win.id,
                    .offset = offset,
                    .bytes = bytes};
  if (shm_ && shm_->put(win, peer, src, bytes, offset, p.sent)) {
    frame.flags = kStoredDirectly;
    raiseAfterStore(peer, frame, waiting);
    return;
  }
  if (bytes > 0 && bytes <= WindowFrame::kInlineBytes && !(p.writes && p.writes->peerWriteMinBytes() == 0)) {
    std::memcpy(frame.inlined, src, bytes);
    frame.flags = kInlined;
  } else if (bytes > 0 && p.writes && bytes >= p.writes->peerWriteMinBytes()) {
    // Stored before the frame is sent: the frame's publication (a release on shared memory) orders them.
    const int err = p.writes->writePeerMemory(win.bases[static_cast<size_t>(peer)] + offset, src, bytes);
    if (err == 0) {
      frame.flags = kStoredDirectly;
      raiseAfterStore(peer, frame, waiting);
      return;
    } else if (err == ESRCH) {
      throw Error(chorusRemoteError,
                  errorContext(rank_, peer, waiting.call) + ": process_vm_writev: " + std::strerror(err) +
                      " (its process is gone)",
                  Failure::kUnspecified, peer);
    } else {
      p.writes = nullptr;
      CHORUS_WARN(rank_, "windows: peer " << peer << ": process_vm_writev: " << std::strerror(err)
                                          << "; its puts travel as messages from now on");
    }
  }
  sendFrame(peer, frame, src, waiting);
}

void WindowChannel::signal(int peer, uint32_t sigIdx, uint32_t ctx, const WindowWaiting& waiting) {
  if (peer == rank_) {
    table_.raise(peer, sigIdx, ctx);
    return;
  }
  if (signalByRdma(peer, sigIdx, ctx, waiting)) return;
  WindowFrame frame{.magic = kWindowFrameMagic, .sigIdx = sigIdx, .ctx = ctx, .windowId = kNoWindow};
  raiseAfterStore(peer, frame, waiting);
}

void WindowChannel::raiseAfterStore(int peer, WindowFrame frame, const WindowWaiting& waiting) {
  const ShmWindowPath::Raised raised =
      shm_ ? shm_->signal(peer, frame.sigIdx, frame.ctx, peerFor(peer, waiting).sent) : ShmWindowPath::Raised::kNo;
  if (raised == ShmWindowPath::Raised::kNo) {
    sendFrame(peer, frame, nullptr, waiting);
  } else if (raised == ShmWindowPath::Raised::kYesPeerSleeps) {
    sendFrame(peer, WindowFrame{.magic = kWindowFrameMagic, .flags = kWakeOnly, .windowId = kNoWindow}, nullptr,
              waiting);
  }
}

void WindowChannel::waitSignals(std::span<const SignalWait> waits, const WindowWaiting& waiting) {
  for (const SignalWait& w : waits) {
    const auto want = static_cast<uint64_t>(w.opCnt);
    if (w.peer == rank_) {
      if (table_.arrived(w.peer, w.sigIdx, w.ctx) < want) {
        throw Error(chorusInvalidUsage, errorContext(rank_, waiting.call) + ": waits for " + std::to_string(want) +
                                            " signals from itself on index " + std::to_string(w.sigIdx) + " with " +
                                            std::to_string(table_.arrived(w.peer, w.sigIdx, w.ctx)) +
                                            " raised: it would never return");
      }
    } else {
      driveUntil(
          [&] {
            // Counter signals join the frames' count here; the sender's counter is never written by this rank.
            const uint64_t counted = shm_ ? shm_->take(w.peer, w.sigIdx, w.ctx) : 0;
            if (counted > 0) table_.raise(w.peer, w.sigIdx, w.ctx, counted);
            return table_.arrived(w.peer, w.sigIdx, w.ctx) >= want;
          },
          w.peer, waiting);
    }
    table_.consume(w.peer, w.sigIdx, w.ctx, want);
  }
}

void WindowChannel::run(const WindowOp& op, const WindowWaiting& waiting) {
  switch (op.kind) {
    case WindowOp::Kind::kPut:
      put(*op.win, op.peer, op.src, op.bytes, op.offset, op.sigIdx, op.ctx, waiting);
      return;
    case WindowOp::Kind::kSignal:
      signal(op.peer, op.sigIdx, op.ctx, waiting);
      return;
    case WindowOp::Kind::kWait:
      waitSignals(op.waits, waiting);
      return;
  }
}

std::vector<uint64_t> WindowChannel::sentCounts() const {
  std::vector<uint64_t> out(state_.size(), 0);
  for (size_t p = 0; p < state_.size(); ++p) out[p] = state_[p].sent;
  return out;
}

void WindowChannel::drain(const std::vector<uint64_t>& expected, const WindowWaiting& waiting) {
  for (size_t q = 0; q < state_.size(); ++q) {
    if (!state_[q].conn) continue;
    driveUntil([&] { return state_[q].landed >= expected[q]; }, static_cast<int>(q), waiting);
  }
}

}  // namespace chorus
