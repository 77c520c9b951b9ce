// A communicator's windows (chorus.h's one-sided calls): each window's base and size on every rank, and the
// signals this rank has received but not yet consumed, counted per (sender, index, context).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

namespace chorus {

struct Window {
  uint64_t id = 0;              // the same on every rank: windows are registered in the same order everywhere
  void* base = nullptr;         // this rank's part
  std::vector<uint64_t> sizes;  // every rank's registered size, in bytes
  std::vector<uint64_t> bases;  // every rank's base address, in its own address space (for direct stores)
  std::vector<uint64_t> keys;   // every rank's key for this rank's RDMA writes into it (bit 32 set), else 0
  std::vector<void*> exposed;   // this rank's part as exposed to each peer (WindowChannel::expose)
  const void* owner = nullptr;  // the handle of the communicator it was registered on (the C API's check)
  bool device = false;          // device memory on every rank, reached by CUDA IPC (device_windows.h)
};

class WindowTable {
 public:
  uint64_t nextId() { return nextId_++; }
  // True for an id not given out yet here: a window the peers registered before this rank did.
  bool notYetRegistered(uint64_t id) const { return id >= nextId_; }
  Window* add(std::unique_ptr<Window> win);
  void remove(const Window* win) { windows_.erase(win->id); }
  // This rank's window with `id`, or nullptr when none is registered under it.
  Window* find(uint64_t id) const;
  void raise(int peer, uint32_t sigIdx, uint32_t ctx, uint64_t n = 1) { signals_[{peer, sigIdx, ctx}] += n; }
  uint64_t arrived(int peer, uint32_t sigIdx, uint32_t ctx) const;
  void consume(int peer, uint32_t sigIdx, uint32_t ctx, uint64_t n) { signals_[{peer, sigIdx, ctx}] -= n; }
  bool empty() const { return windows_.empty(); }

 private:
  uint64_t nextId_ = 0;
  std::map<uint64_t, std::unique_ptr<Window>> windows_;
  std::map<std::tuple<int, uint32_t, uint32_t>, uint64_t> signals_;
};

}  // namespace chorus
