// Windows of device memory (chorus.h's put and signal on a CUDA stream), between ranks that reach each other by
// CUDA IPC: at registration each rank exports its window and a block of signal counters in device memory and opens
// every peer's (a peer that is a thread of this process is used by its own pointers). A put is a copy on the
// caller's stream into the peer's opened window, then a stream write of the signal's new count into the peer's
// counter (DeviceApi::streamWriteFlag, fenced behind the copy); a wait makes the stream wait until this rank's
// counter reaches the count wanted (DeviceApi::streamWaitFlag). The host only enqueues: nothing waits for a peer.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "device/device_api.h"
#include "src/comm/window_channel.h"
#include "src/comm/window_op.h"
#include "src/comm/window_table.h"

namespace chorus {

class DeviceWindows {
 public:
  // Signal indices and contexts a device window's signals may use (NCCL 2.29 takes only 0 for both).
  static constexpr uint32_t kSignalIndices = 16;
  static constexpr uint32_t kContexts = 4;
  // Words of one rank's card in a registration's exchange (an allgather).
  static constexpr size_t kCardWords = 22;

  DeviceWindows(int rank, int size) : rank_(rank), size_(size) {}
  // Closes what it opened, frees its signal counters and events; never throws.
  ~DeviceWindows();
  DeviceWindows(const DeviceWindows&) = delete;
  DeviceWindows& operator=(const DeviceWindows&) = delete;

  // This rank's card for registering [base, base + bytes): onDevice says whether the buffer is device memory; the
  // first device window allocates the signal counters. sameMachine[p]: CUDA IPC reaches rank p.
  std::vector<uint64_t> card(DeviceApi& api, void* base, uint64_t bytes, bool onDevice,
                             const std::vector<bool>& sameMachine);
  // Whether any rank's card (every rank's, in rank order) registers device memory.
  static bool anyOnDevice(const std::vector<uint64_t>& cards);
  // Makes `win` a device window from every rank's card: opens each peer's part and, the first time, its counters.
  // Refuses (chorusInvalidUsage naming rank and peer) a window mixing host and device memory and a peer that CUDA
  // IPC cannot reach (on another machine), alike on every rank.
  void open(Window& win, const std::vector<uint64_t>& cards);
  // Enqueues puts, signals and waits on stream s (CUDA's), in order; returns at once.
  void enqueue(std::span<const WindowOp> ops, DeviceStream s, const char* call);
  // Returns once every put and signal this rank enqueued has run (deregistration: nothing of it still moves).
  void quiesce(const WindowWaiting& waiting);
  // Closes this rank's mappings of `win`'s peer parts (after quiesce and the ranks' exchange).
  void close(const Window& win);
  // True once a device window was registered (signals on a CUDA stream need one).
  bool ready() const { return signals_ != nullptr; }

 private:
  struct Opened {
    std::vector<char*> parts;   // [p]: peer p's part of the window, in this process
    std::vector<void*> mapped;  // what ipcOpen returned, closed with the window
  };
  static size_t slot(int sender, uint32_t sigIdx, uint32_t ctx) {
    return (static_cast<size_t>(sender) * kSignalIndices + sigIdx) * kContexts + ctx;
  }
  [[noreturn]] void refuse(const std::string& call, const std::string& what) const;
  void checkSignal(const char* call, int peer, uint32_t sigIdx, uint32_t ctx) const;
  void markDone(DeviceStream s);

  const int rank_, size_;
  std::mutex mutex_;
  DeviceApi* api_ = nullptr;
  uint32_t* signals_ = nullptr;               // this rank's counters: slot(sender, sigIdx, ctx)
  std::vector<uint32_t*> peerSignals_;        // [p]: peer p's counters, in this process (null until opened)
  std::vector<void*> mappedSignals_;          // ipcOpen'd counters, closed at the end
  std::vector<uint32_t> raised_;              // [p * slots + slot]: signals this rank enqueued to p
  std::vector<uint32_t> consumed_;            // [slot]: signals this rank's waits enqueued so far took
  std::map<uint64_t, Opened> windows_;        // by window id
  std::map<DeviceStream, DeviceEvent> done_;  // the last put or signal on each stream
};

}  // namespace chorus
