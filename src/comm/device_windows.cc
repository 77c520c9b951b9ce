#include "src/comm/device_windows.h"

#include <algorithm>
#include <cstring>
#include <exception>

#include "core/error.h"
#include "core/logging.h"
#include "device/poll_backoff.h"
#include "transports/device/process_token.h"

namespace chorus {
namespace {

// A card's words (DeviceWindows::kCardWords).
enum Word : size_t {
  kOnDevice = 0,
  kProcess = 1,     // processToken(): a peer of the same process uses pointers, not IPC
  kBaseOffset = 2,  // the window's start inside its allocation (what IPC maps)
  kHasWindow = 3,   // 1: the window handle below is set (bytes > 0)
  kSignalsAddress = 4,
  kWindowHandle = 5,    // 8 words
  kSignalsHandle = 13,  // 8 words
  kMachine = 21,        // the lowest rank sharing this rank's machine
};
constexpr size_t kHandleWords = sizeof(DeviceIpcHandle) / sizeof(uint64_t);
static_assert(kHandleWords == 8 && kSignalsHandle + kHandleWords == kMachine &&
              DeviceWindows::kCardWords == kMachine + 1);

const uint64_t* cardOf(const std::vector<uint64_t>& cards, int r) {
  return cards.data() + static_cast<size_t>(r) * DeviceWindows::kCardWords;
}

DeviceIpcHandle handleAt(const uint64_t* card, size_t word) {
  DeviceIpcHandle h;
  std::memcpy(h.bytes, card + word, sizeof(h.bytes));
  return h;
}

}  // namespace

DeviceWindows::~DeviceWindows() {
  if (api_ == nullptr) return;
  auto quietly = [&](const char* what, auto f) {
    try {
      f();
    } catch (const std::exception& e) {
      CHORUS_WARN(rank_, "device windows: " << what << ": " << e.what());
    }
  };
  for (auto& [id, opened] : windows_) {
    for (void* p : opened.mapped) quietly("closing a peer's window", [&] { api_->ipcClose(p); });
  }
  for (void* p : mappedSignals_) quietly("closing a peer's signal counters", [&] { api_->ipcClose(p); });
  for (auto& done : done_) quietly("destroying an event", [&] { api_->destroyEvent(done.second); });
  if (signals_ != nullptr) quietly("freeing the signal counters", [&] { api_->deviceFree(signals_); });
}

void DeviceWindows::refuse(const std::string& call, const std::string& what) const {
  throw Error(chorusInvalidUsage, errorContext(rank_, call) + ": " + what);
}

std::vector<uint64_t> DeviceWindows::card(DeviceApi& api, void* base, uint64_t bytes, bool onDevice,
                                          const std::vector<bool>& sameMachine) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<uint64_t> c(kCardWords, 0);
  const auto first = std::find(sameMachine.begin(), sameMachine.end(), true);
  c[kMachine] = static_cast<uint64_t>(first - sameMachine.begin());
  if (!onDevice) return c;
  const char* call = "chorusCommWindowRegister";
  if (signals_ == nullptr) {
    const size_t bytesOfSignals = static_cast<size_t>(size_) * kSignalIndices * kContexts * sizeof(uint32_t);
    api_ = &api;
    signals_ = static_cast<uint32_t*>(api.deviceAlloc(bytesOfSignals));
    // Counters start at 0: a stream copy of zeros, waited for here, once.
    std::vector<uint32_t> zeros(bytesOfSignals / sizeof(uint32_t), 0);
    DeviceStream s = api.createStream();
    api.copyAsync(signals_, zeros.data(), bytesOfSignals, s);
    api.synchronize(s);
    api.destroyStream(s);
    peerSignals_.assign(static_cast<size_t>(size_), nullptr);
    raised_.assign(static_cast<size_t>(size_) * size_ * kSignalIndices * kContexts, 0);
    consumed_.assign(static_cast<size_t>(size_) * kSignalIndices * kContexts, 0);
  }
  c[kOnDevice] = 1;
  c[kProcess] = processToken();
  c[kSignalsAddress] = reinterpret_cast<uint64_t>(signals_);
  DeviceIpcHandle h{};
  api.ipcExport(signals_, &h);
  std::memcpy(&c[kSignalsHandle], h.bytes, sizeof(h.bytes));
  if (bytes > 0) {
    char* allocation = static_cast<char*>(api.allocationBase(base));
    if (allocation == nullptr) {
      refuse(call, "the device window's buffer is not inside an allocation the " + std::string(api.name()) +
                       " device API knows");
    }
    api.ipcExport(allocation, &h);
    std::memcpy(&c[kWindowHandle], h.bytes, sizeof(h.bytes));
    c[kHasWindow] = 1;
    c[kBaseOffset] = static_cast<uint64_t>(static_cast<char*>(base) - allocation);
  }
  return c;
}

bool DeviceWindows::anyOnDevice(const std::vector<uint64_t>& cards) {
  for (size_t i = kOnDevice; i < cards.size(); i += kCardWords) {
    if (cards[i] != 0) return true;
  }
  return false;
}

void DeviceWindows::open(Window& win, const std::vector<uint64_t>& cards) {
  std::lock_guard<std::mutex> lock(mutex_);
  const char* call = "chorusCommWindowRegister";
  // Every rank decides from the same cards, so all refuse alike.
  for (int r = 0; r < size_; ++r) {
    if (cardOf(cards, r)[kOnDevice] == 0) {
      int other = 0;
      while (cardOf(cards, other)[kOnDevice] == 0) ++other;
      refuse(call, "window " + std::to_string(win.id) + ": rank " + std::to_string(r) +
                       " registered host memory where rank " + std::to_string(other) +
                       " registered device memory (a window is device memory on every rank or on none)");
    }
    if (cardOf(cards, r)[kMachine] != 0) {
      refuse(call, "device window " + std::to_string(win.id) + ": rank " + std::to_string(r) +
                       " is not on rank 0's machine, and device windows reach peers only by CUDA IPC (not over "
                       "TCP, ib or host shared memory): register host memory for windows across machines");
    }
  }
  Opened opened;
  opened.parts.assign(static_cast<size_t>(size_), nullptr);
  const uint64_t me = processToken();
  try {
    for (int p = 0; p < size_; ++p) {
      const uint64_t* c = cardOf(cards, p);
      const bool sameProcess = c[kProcess] == me;
      if (peerSignals_[p] == nullptr) {
        if (sameProcess) {
          peerSignals_[p] = reinterpret_cast<uint32_t*>(c[kSignalsAddress]);
        } else {
          void* m = api_->ipcOpen(handleAt(c, kSignalsHandle));
          mappedSignals_.push_back(m);
          peerSignals_[p] = static_cast<uint32_t*>(m);
        }
      }
      if (c[kHasWindow] == 0) continue;
      if (sameProcess) {
        opened.parts[p] = reinterpret_cast<char*>(win.bases[static_cast<size_t>(p)]);
      } else {
        void* m = api_->ipcOpen(handleAt(c, kWindowHandle));
        opened.mapped.push_back(m);
        opened.parts[p] = static_cast<char*>(m) + c[kBaseOffset];
      }
    }
  } catch (const Error& e) {
    for (void* m : opened.mapped) api_->ipcClose(m);
    throw e.withMessage(errorContext(rank_, call) + ": opening a peer's device window by CUDA IPC: " + e.what());
  }
  win.device = true;
  windows_[win.id] = std::move(opened);
}

void DeviceWindows::checkSignal(const char* call, int peer, uint32_t sigIdx, uint32_t ctx) const {
  if (sigIdx >= kSignalIndices || ctx >= kContexts) {
    refuse(call, "peer " + std::to_string(peer) + ": sigIdx " + std::to_string(sigIdx) + " and ctx " +
                     std::to_string(ctx) + " on a CUDA stream must be below " + std::to_string(kSignalIndices) +
                     " and " + std::to_string(kContexts));
  }
}

void DeviceWindows::markDone(DeviceStream s) {
  DeviceEvent& e = done_[s];
  if (e == nullptr) e = api_->createEvent();
  api_->recordEvent(e, s);
}

void DeviceWindows::enqueue(std::span<const WindowOp> ops, DeviceStream s, const char* call) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (signals_ == nullptr) refuse(call, "a CUDA stream, but no device window is registered on this communicator");
  const size_t slots = static_cast<size_t>(size_) * kSignalIndices * kContexts;
  for (const WindowOp& op : ops) {
    switch (op.kind) {
      case WindowOp::Kind::kPut:
      case WindowOp::Kind::kSignal: {
        checkSignal(op.callName(), op.peer, op.sigIdx, op.ctx);
        if (op.kind == WindowOp::Kind::kPut && op.bytes > 0) {
          auto it = windows_.find(op.win->id);
          if (it == windows_.end())
            refuse(op.callName(), "window " + std::to_string(op.win->id) + " is not a device window");
          api_->copyAsync(it->second.parts[static_cast<size_t>(op.peer)] + op.offset, op.src, op.bytes, s);
        }
        const size_t at = slot(rank_, op.sigIdx, op.ctx);
        const uint32_t count = ++raised_[static_cast<size_t>(op.peer) * slots + at];
        api_->streamWriteFlag(s, peerSignals_[static_cast<size_t>(op.peer)] + at, count);
        markDone(s);
        break;
      }
      case WindowOp::Kind::kWait: {
        // All checked before any is enqueued: a refused wait leaves the counts as they were.
        std::vector<uint32_t> wanted = consumed_;
        for (const SignalWait& w : op.waits) {
          checkSignal(op.callName(), w.peer, w.sigIdx, w.ctx);
          const size_t at = slot(w.peer, w.sigIdx, w.ctx);
          wanted[at] += static_cast<uint32_t>(w.opCnt);
          if (w.peer == rank_ &&
              static_cast<int32_t>(raised_[static_cast<size_t>(rank_) * slots + at] - wanted[at]) < 0) {
            refuse(op.callName(), "waits for signals from itself (sigIdx " + std::to_string(w.sigIdx) + ", ctx " +
                                      std::to_string(w.ctx) + ") that it has not raised: it could never return");
          }
        }
        for (const SignalWait& w : op.waits) {
          if (w.opCnt == 0) continue;
          const size_t at = slot(w.peer, w.sigIdx, w.ctx);
          api_->streamWaitFlag(s, signals_ + at, wanted[at]);
        }
        consumed_ = std::move(wanted);
        break;
      }
    }
  }
}

void DeviceWindows::quiesce(const WindowWaiting& waiting) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [s, e] : done_) {
    PollBackoff backoff;
    while (!api_->eventDone(e)) {
      if (waiting.deadline.expired()) {
        throw Error(chorusTimeout, errorContext(rank_, waiting.call) +
                                       ": timed out (CHORUS_TIMEOUT) waiting for this rank's puts on CUDA stream "
                                       "work to run (is the stream held by a wait that never ends?)");
      }
      if (waiting.aborted->load(std::memory_order_relaxed)) {
        throw Error(chorusRemoteError, errorContext(rank_, waiting.call) + ": aborted by chorusCommAbort",
                    Failure::kAborted);
      }
      backoff.pause();
    }
  }
}

void DeviceWindows::close(const Window& win) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = windows_.find(win.id);
  if (it == windows_.end()) return;
  Opened opened = std::move(it->second);
  windows_.erase(it);
  for (void* m : opened.mapped) api_->ipcClose(m);
}

}  // namespace chorus
