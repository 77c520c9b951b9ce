// A page-aligned host buffer with a guard band on each side, allocated once and reused for every size.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>

#include <sys/mman.h>

namespace chorus::perf {

class GuardedBuffer {
 public:
  // Bytes of guard band before and after the usable region; a call writing there is caught by the check.
  static constexpr size_t kGuardBytes = 4096;
  static constexpr size_t kHugePageBytes = 2u << 20;

  GuardedBuffer() = default;
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;
  ~GuardedBuffer() { std::free(allocation_); }

  // Allocates capacity usable bytes plus the guards and touches every page once (this VM pays ~10 us for the first
  // touch of each page, which must not land in a timed loop). False when the memory is not there. hugePages: on
  // transparent huge pages where the kernel grants them (2 MiB aligned, MADV_HUGEPAGE before the first touch).
  bool allocate(size_t capacity, bool hugePages = false) {
    const size_t usable = (capacity + kGuardBytes - 1) / kGuardBytes * kGuardBytes;
    const size_t align = hugePages ? kHugePageBytes : kGuardBytes;
    const size_t total = (usable + 2 * kGuardBytes + align - 1) / align * align;
    allocation_ = static_cast<std::byte*>(std::aligned_alloc(align, total));
    if (allocation_ == nullptr) return false;
    // A refusal (no THP in this kernel, or THP off) leaves small pages: slower here, not wrong.
    if (hugePages) (void)madvise(allocation_, total, MADV_HUGEPAGE);
    std::memset(allocation_, 0, total);
    capacity_ = usable;
    return true;
  }

  // The first usable byte (kGuardBytes past the allocation's start).
  std::byte* data() const { return allocation_ + kGuardBytes; }
  // Usable bytes (the requested capacity rounded up to whole guards); kGuardBytes more follow them.
  size_t capacity() const { return capacity_; }

 private:
  std::byte* allocation_ = nullptr;
  size_t capacity_ = 0;
};

}  // namespace chorus::perf
