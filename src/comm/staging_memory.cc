#include "src/comm/staging_memory.h"

#include <sys/mman.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <utility>

#include "core/error.h"

namespace chorus {
namespace {

char* mapTouched(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    throwSystemError("allocating " + std::to_string(bytes) + " bytes of staging memory", "mmap", errno);
  // On 4 KiB pages, as the user's buffers mostly are: staging on transparent huge pages beside them makes calls 1.5x
  // to 3x slower every 0.5 s on this project's VM (perf/results/tcp.md, "Slow spells: huge-page staging beside 4 KiB
  // pages"). Touching them first costs more (a 2-rank 8-byte job 0.14-0.15 s instead of 0.12-0.13), once.
  std::memset(p, 0, bytes);
  return static_cast<char*>(p);
}

}  // namespace

StagingAllocator StagingAllocator::host() {
  return StagingAllocator{mapTouched, [](char* p, size_t bytes) { munmap(p, bytes); }};
}

StagingMemory::StagingMemory(int slots, size_t sliceBytes, size_t workspaceBytes, StagingAllocator allocator)
    : allocator_(std::move(allocator)), slots_(slots), sliceBytes_(sliceBytes) {
  try {
    pools_[0] = allocate(static_cast<size_t>(slots) * sliceBytes);
    pools_[1] = allocate(static_cast<size_t>(slots) * sliceBytes);
    workspace_ = allocate(workspaceBytes);
    workspaceBytes_ = workspaceBytes;
  } catch (...) {
    for (char* p : pools_) release(p, static_cast<size_t>(slots_) * sliceBytes_);
    throw;
  }
}

StagingMemory::~StagingMemory() {
  for (char* p : pools_) release(p, static_cast<size_t>(slots_) * sliceBytes_);
  release(workspace_, workspaceBytes_);
  release(scratch_, scratchBytes_);
}

char* StagingMemory::grow(char*& region, size_t& size, size_t bytes) {
  if (bytes > size) {
    // Powers of two: a run of calls each a little larger grows the region log(n) times, not n times (device
    // allocators keep what they replace until teardown).
    bytes = std::bit_ceil(bytes);
    char* bigger = allocate(bytes);
    release(region, size);
    region = bigger;
    size = bytes;
  }
  return region;
}

}  // namespace chorus
