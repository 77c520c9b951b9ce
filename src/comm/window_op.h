// One window call as the engine runs it (alone, in a group, or queued on a host stream): a put, a bare signal, or a
// wait for signals (chorus.h's windows).
#pragma once

#include <cstdint>
#include <vector>

#include "src/comm/window_table.h"

namespace chorus {

// One chorusWaitSignal desc.
struct SignalWait {
  int opCnt, peer;
  uint32_t sigIdx, ctx;
};

struct WindowOp {
  enum class Kind { kPut, kSignal, kWait };
  Kind kind = Kind::kPut;
  const Window* win = nullptr;  // kPut
  int peer = -1;                // kPut, kSignal
  const void* src = nullptr;    // kPut: the bytes, which stay valid until the op has run
  uint64_t bytes = 0, offset = 0;
  uint32_t sigIdx = 0, ctx = 0;
  std::vector<SignalWait> waits;  // kWait

  // The C call it stands for, for errors.
  const char* callName() const {
    return kind == Kind::kPut ? "chorusPutSignal" : kind == Kind::kSignal ? "chorusSignal" : "chorusWaitSignal";
  }
};

}  // namespace chorus
