// The state behind a communicator's windows (chorus.h's one-sided calls): each window's bases and sizes on every
// rank, and the signals this rank has received but not yet consumed, counted per (sender, index, context).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

struct chorusWindow {
  uint64_t id = 0;              // the same on every rank: windows are registered in the same order everywhere
  void* base = nullptr;         // this rank's part
  std::vector<uint64_t> sizes;  // every rank's registered size, in bytes
  struct chorusComm* comm = nullptr;
};

namespace chorus::api {

// What travels ahead of each put or signal on the pair's ordered stream: the receiver learns from it where the
// bytes that follow go and which signal to raise once they are in.
struct WindowFrame {
  uint32_t magic = 0;
  uint32_t sigIdx = 0;
  uint32_t ctx = 0;
  uint32_t reserved = 0;
  uint64_t windowId = 0;  // kNoWindow: a bare signal
  uint64_t offset = 0;
  uint64_t bytes = 0;
};
inline constexpr uint32_t kWindowFrameMagic = 0x57494e44u;  // "WIND"
inline constexpr uint64_t kNoWindow = ~uint64_t{0};

class WindowTable {
 public:
  uint64_t nextId() { return nextId_++; }
  void add(chorusWindow* win);
  void remove(chorusWindow* win);
  // This rank's window with `id`, or nullptr when none is registered under it.
  chorusWindow* find(uint64_t id) const;
  void raise(int peer, uint32_t sigIdx, uint32_t ctx) { ++signals_[{peer, sigIdx, ctx}]; }
  uint64_t arrived(int peer, uint32_t sigIdx, uint32_t ctx) const;
  void consume(int peer, uint32_t sigIdx, uint32_t ctx, uint64_t n) { signals_[{peer, sigIdx, ctx}] -= n; }
  // One one-sided call at a time per communicator: a wait reads frames off the pair's stream in order.
  std::mutex& mutex() { return mutex_; }

 private:
  std::mutex mutex_;
  uint64_t nextId_ = 0;
  std::map<uint64_t, chorusWindow*> windows_;
  std::map<std::tuple<int, uint32_t, uint32_t>, uint64_t> signals_;
};

}  // namespace chorus::api
