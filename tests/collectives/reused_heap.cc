// Test processes keep the memory they free in the heap, for the next case to reuse.
//
// A collective case allocates its buffers and references and frees them afterwards. glibc maps allocations over
// 128 KiB afresh and gives a freed heap top back to the kernel, so every case faulted its pages in again (perf, the
// 8-rank ib world: 14% of its CPU in page faults, 17% in the memset and memcpy that touched the fresh pages).
// Linked into the collective test binary and the workers its process worlds run; a static initializer, so it holds
// before any test allocates.
// A hint only: where mallopt refuses (ASan's allocator always does), the allocator's defaults stay.
#include <malloc.h>

namespace {

[[maybe_unused]] const bool kFreedMemoryKept = [] {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest: allocations up to 32 MiB come from the heap
  mallopt(M_TRIM_THRESHOLD, 1 << 30);   // and what is freed stays there
  return true;
}();

}  // namespace
