// CommEngine's window calls (chorus.h's put and signal): the order, locking and collective steps around the
// window channel (window_channel.h), which moves the frames.
#include <sys/prctl.h>

#include <cerrno>
#include <cstring>

#include "core/logging.h"
#include "src/comm/comm_engine.h"

namespace chorus {

template <class F>
void CommEngine::windowCall(uint64_t number, bool passTurn, const char* call, F f) {
  order_->waitTurn(number, failures_.state().abortFlag());
  TurnPassedOnExit passOn(passTurn ? order_.get() : nullptr, number);
  device_.drain();
  CallLocked locked(*order_);
  CommLogScope logScope(config_.commName);
  failures_.refuseIfUnusable([&] { return errorContext(rank_, call); });
  f(WindowWaiting{Deadline::after(config_.timeoutSeconds), &failures_.state().abortFlag(), call, waitPolicy_});
}

Window* CommEngine::registerWindow(void* base, size_t bytes, const void* owner, bool onDevice) {
  // The window connections first: where a peer may write into the window itself (ib) it is registered with the
  // adapter now. Every rank's size and base address, what shared memory maps (shm_window_path.h), the key each
  // peer needs (ib) and its device card (device_windows.h; all zero but one word for host memory) then travel in
  // one allgather, in rank order.
  const auto n = static_cast<size_t>(size_);
  const std::vector<uint64_t> card = deviceWindows_.card(deviceApi(), base, bytes, onDevice, peers_.sameMachine());
  std::vector<uint64_t> mine{bytes, reinterpret_cast<uint64_t>(base)};
  std::vector<void*> exposed;
  size_t shmWords = 0;
  windowCall(issueHostCall(), true, "chorusCommWindowRegister", [&](const WindowWaiting&) {
    const std::vector<uint64_t> shared = windows_.shmAnnounce(base, bytes, size_);
    shmWords = shared.size();
    mine.insert(mine.end(), shared.begin(), shared.end());
    if (!windows_.isOpen()) {
      // Under Yama's ptrace_scope 1 a peer may write into this process's windows only when allowed to (as Open
      // MPI's CMA path does); EINVAL where Yama is absent, which needs nothing.
      if (::prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0) != 0 && errno != EINVAL) {
        CHORUS_INFO(rank_, "windows: prctl(PR_SET_PTRACER): " << std::strerror(errno));
      }
      LaunchSpec spec = family_.spec();
      spec.keyPrefix += "windows/";
      spec.serveStore = false;
      // The communicator's own settings: shared memory stores puts into the target's window between ranks that
      // are threads of one process, and between processes by process_vm_writev with CHORUS_SHM_CMA=2
      // (transports/shm/shm_connection.h says why only then).
      windows_.open(
          PeerConnections::connect(spec, config_, peers_.storeServer(), Deadline::after(config_.timeoutSeconds)));
      io_->setSideProgress(&windows_);
    }
    // Device memory is not registered with an adapter: its puts go by CUDA IPC (device_windows.h).
    const std::vector<uint64_t> keys = windows_.expose(base, onDevice ? 0 : bytes, &exposed);
    mine.insert(mine.end(), keys.begin(), keys.end());
    mine.insert(mine.end(), card.begin(), card.end());
  });
  const size_t words = mine.size();
  std::vector<uint64_t> all(words * n);
  try {
    run(CallArgs{.collective = Collective::kAllGather,
                 .send = mine.data(),
                 .recv = all.data(),
                 .count = words,
                 .type = chorusUint64});
  } catch (...) {
    CallLocked locked(*order_);
    windows_.unexpose(exposed);
    throw;
  }
  Window* added = nullptr;
  windowCall(issueHostCall(), true, "chorusCommWindowRegister", [&](const WindowWaiting&) {
    auto w = std::make_unique<Window>();
    w->id = windows_.table().nextId();
    w->base = base;
    w->owner = owner;
    std::vector<uint64_t> shared, cards;
    for (size_t r = 0; r < n; ++r) {
      const uint64_t* at = &all[words * r];
      w->sizes.push_back(at[0]);
      w->bases.push_back(at[1]);
      shared.insert(shared.end(), at + 2, at + 2 + shmWords);
      w->keys.push_back(at[2 + shmWords + static_cast<size_t>(rank_)]);
      cards.insert(cards.end(), at + 2 + shmWords + n, at + words);
    }
    w->exposed = std::move(exposed);
    if (DeviceWindows::anyOnDevice(cards)) deviceWindows_.open(*w, cards);
    added = windows_.table().add(std::move(w));
    windows_.shmAttach(*added, shared);
  });
  return added;
}

void CommEngine::deregisterWindow(Window* win) {
  // Each rank learns how many frames every peer sent it and lands them all: no put is still on its way into the
  // window once this returns anywhere.
  std::vector<uint64_t> sent, expected(static_cast<size_t>(size_));
  windowCall(issueHostCall(), true, "chorusCommWindowDeregister", [&](const WindowWaiting& waiting) {
    // A device window's puts run on streams: once they have, the exchange below tells every peer so.
    if (win->device) deviceWindows_.quiesce(waiting);
    sent = windows_.sentCounts();
  });
  sent.resize(static_cast<size_t>(size_), 0);
  run(CallArgs{.collective = Collective::kAllToAll,
               .send = sent.data(),
               .recv = expected.data(),
               .count = 1,
               .type = chorusUint64});
  windowCall(issueHostCall(), true, "chorusCommWindowDeregister", [&](const WindowWaiting& waiting) {
    windows_.drain(expected, waiting);
    if (win->device) deviceWindows_.close(*win);
    windows_.forget(win);  // every write into it has landed
  });
}

void CommEngine::flushWindows() {
  windowCall(issueHostCall(), true, "chorusWindowFlush", [&](const WindowWaiting& waiting) {
    if (windows_.isOpen()) windows_.flush(waiting);
  });
}

void CommEngine::runWindowIssued(uint64_t number, std::span<const WindowOp> ops, bool passTurn) {
  if (ops.empty()) {
    skipIssued(number, passTurn);
    return;
  }
  windowCall(number, passTurn, ops[0].callName(), [&](WindowWaiting waiting) {
    if (!windows_.isOpen()) {
      throw Error(chorusInvalidUsage,
                  errorContext(rank_, waiting.call) + ": no window is registered on this communicator");
    }
    for (const WindowOp& op : ops) {
      waiting.call = op.callName();
      windows_.run(op, waiting);
    }
  });
}

void CommEngine::runDeviceWindowOps(std::span<const WindowOp> ops, DeviceStream stream) {
  if (ops.empty()) return;
  CallerCount inside(activeCallers_);
  CommLogScope logScope(config_.commName);
  failures_.refuseIfUnusable([&] { return errorContext(rank_, ops[0].callName()); });
  deviceWindows_.enqueue(ops, stream, ops[0].callName());
}

std::string CommEngine::windowPaths() {
  CallLocked locked(*order_);
  return windows_.isOpen() ? windows_.describe() : "";
}

}  // namespace chorus
