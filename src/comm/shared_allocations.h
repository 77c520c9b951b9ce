// chorusMemAlloc's memory: host pages in a memfd mapping, which another process of the same host can map too
// (windows map a peer's registered part of it: src/comm/shm_window_path.h). A memfd has no name in /dev/shm, so
// nothing is left behind however the processes end.
#pragma once

#include <cstddef>
#include <cstdint>

namespace chorus {

// Where a pointer lies in a chorusMemAlloc allocation: its memfd (this process's descriptor), the allocation's
// length, the pointer's offset in it, and the file's identity (a mapper checks it opened the right file).
struct SharedAllocation {
  int fd = -1;
  uint64_t bytes = 0, offset = 0;
  uint64_t dev = 0, ino = 0;
};

// Maps `bytes` of fresh shared pages (untouched: a page costs its first toucher); throws chorus::Error
// (chorusSystemError naming the call and the system's text) when the system refuses.
void* allocateShared(size_t bytes);
// Unmaps an allocation allocateShared returned; false when `p` is not one.
bool freeShared(void* p);
// True with *out filled when [p, p + bytes) lies wholly inside one live allocation.
bool findShared(const void* p, size_t bytes, SharedAllocation* out);

}  // namespace chorus
