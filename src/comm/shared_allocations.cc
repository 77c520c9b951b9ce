#include "src/comm/shared_allocations.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <mutex>
#include <string>

#include "core/error.h"

namespace chorus {

namespace {

struct Allocation {
  int fd;
  size_t bytes;
  uint64_t dev, ino;
};

std::mutex& sharedAllocationsMutex() {
  static std::mutex m;
  return m;
}

// Allocations by base address.
std::map<uintptr_t, Allocation>& sharedAllocations() {
  static std::map<uintptr_t, Allocation> r;
  return r;
}

}  // namespace

void* allocateShared(size_t bytes) {
  const std::string what = "chorusMemAlloc of " + std::to_string(bytes) + " bytes";
  const int fd = ::memfd_create("chorus-mem", MFD_CLOEXEC);
  if (fd < 0) throwSystemError(what, "memfd_create", errno);
  if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    const int err = errno;
    ::close(fd);
    throwSystemError(what, "ftruncate", err);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throwSystemError(what, "fstat", err);
  }
  // No MAP_POPULATE: the pages are made as the caller touches them.
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    const int err = errno;
    ::close(fd);
    throwSystemError(what, "mmap", err);
  }
  std::lock_guard<std::mutex> lock(sharedAllocationsMutex());
  sharedAllocations()[reinterpret_cast<uintptr_t>(p)] =
      Allocation{fd, bytes, static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
  return p;
}

bool freeShared(void* p) {
  Allocation a{};
  {
    std::lock_guard<std::mutex> lock(sharedAllocationsMutex());
    auto it = sharedAllocations().find(reinterpret_cast<uintptr_t>(p));
    if (it == sharedAllocations().end()) return false;
    a = it->second;
    sharedAllocations().erase(it);
  }
  ::munmap(p, a.bytes);
  ::close(a.fd);
  return true;
}

bool findShared(const void* p, size_t bytes, SharedAllocation* out) {
  const auto at = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(sharedAllocationsMutex());
  auto it = sharedAllocations().upper_bound(at);
  if (it == sharedAllocations().begin()) return false;
  --it;
  const Allocation& a = it->second;
  const uint64_t offset = at - it->first;
  if (offset > a.bytes || bytes > a.bytes - offset) return false;
  *out = SharedAllocation{a.fd, a.bytes, offset, a.dev, a.ino};
  return true;
}

}  // namespace chorus
