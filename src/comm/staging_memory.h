// Staging buffers a communicator owns for its lifetime: faulted in once at init (first touch is slow on VMs),
// reused by every call, never allocated per call. Host memory by default; device calls give an allocator of
// device memory, so that the algorithms' slots and workspaces live where their buffers do.
#pragma once

#include <cstddef>
#include <functional>

#include "algorithms/peer_io.h"

namespace chorus {

// Where staging regions come from: allocate(bytes) returns a region of that size or throws; release(p, bytes)
// gives one back. The default maps touched anonymous host memory.
struct StagingAllocator {
  std::function<char*(size_t)> allocate;
  std::function<void(char*, size_t)> release;
  // Anonymous host memory, faulted in (huge pages where the kernel grants them).
  static StagingAllocator host();
};

class StagingMemory {
 public:
  // A communicator's shape: slots per pool (a pipeline's window), and the workspace it starts with.
  static constexpr int kSlots = 4;
  static constexpr size_t kFirstWorkspaceBytes = 64 << 10;

  // `slots` slices of sliceBytes in each of the two pools (SlotPool), and a workspace of workspaceBytes.
  StagingMemory(int slots, size_t sliceBytes, size_t workspaceBytes,
                StagingAllocator allocator = StagingAllocator::host());
  ~StagingMemory();
  StagingMemory(const StagingMemory&) = delete;
  StagingMemory& operator=(const StagingMemory&) = delete;

  char* slot(SlotPool pool, int index) const {
    return pools_[static_cast<int>(pool)] + static_cast<size_t>(index) * sliceBytes_;
  }
  int slots() const { return slots_; }
  size_t sliceBytes() const { return sliceBytes_; }
  // The workspace, grown (once, and kept) when a call needs more than it has.
  char* workspace(size_t bytes) { return grow(workspace_, workspaceBytes_, bytes); }
  // A second region like workspace(), for algorithms composed of others that use workspace().
  char* scratch(size_t bytes) { return grow(scratch_, scratchBytes_, bytes); }

 private:
  char* allocate(size_t bytes) { return bytes == 0 ? nullptr : allocator_.allocate(bytes); }
  void release(char* p, size_t bytes) {
    if (p) allocator_.release(p, bytes);
  }
  // The region, replaced by a larger one (kept from then on) when `bytes` exceeds its size.
  char* grow(char*& region, size_t& size, size_t bytes);

  StagingAllocator allocator_;
  int slots_;
  size_t sliceBytes_;
  char* pools_[2] = {nullptr, nullptr};
  char* workspace_ = nullptr;
  size_t workspaceBytes_ = 0;
  char* scratch_ = nullptr;
  size_t scratchBytes_ = 0;
};

}  // namespace chorus
