// Staging buffers a communicator owns for its lifetime: faulted in once at init (first touch is slow on VMs),
// reused by every call, never allocated per call.
#pragma once

#include <cstddef>

namespace chorus {

class StagingMemory {
 public:
  // `slots` slices of sliceBytes in each of two pools, and a flat region of flatBytes.
  StagingMemory(int slots, size_t sliceBytes, size_t flatBytes);
  ~StagingMemory();
  StagingMemory(const StagingMemory&) = delete;
  StagingMemory& operator=(const StagingMemory&) = delete;

  char* slot(int pool, int index) const { return pools_[pool] + static_cast<size_t>(index) * sliceBytes_; }
  int slots() const { return slots_; }
  size_t sliceBytes() const { return sliceBytes_; }
  // The flat region, grown (once, and kept) when a call needs more than it has.
  char* flat(size_t bytes) { return grow(flat_, flatBytes_, bytes); }
  // A second region like flat(), for algorithms composed of others that use flat().
  char* scratch(size_t bytes) { return grow(scratch_, scratchBytes_, bytes); }

 private:
  static char* mapTouched(size_t bytes);
  static void unmap(char* p, size_t bytes);
  // The region, replaced by a larger one (kept from then on) when `bytes` exceeds its size.
  static char* grow(char*& region, size_t& size, size_t bytes);

  int slots_;
  size_t sliceBytes_;
  char* pools_[2] = {nullptr, nullptr};
  char* flat_ = nullptr;
  size_t flatBytes_ = 0;
  char* scratch_ = nullptr;
  size_t scratchBytes_ = 0;
};

}  // namespace chorus
