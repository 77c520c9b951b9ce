// The emulated device's memory (a GPU's, emulated in host memory for machines without one): every allocation is
// its own memfd mapped MAP_SHARED, registered so that any pointer inside it is recognised as device memory, and
// describable to another process of the machine, which maps the same pages through pidfd_getfd(2) (or
// /proc/<pid>/fd/<fd> where that is refused) as CUDA IPC would.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <shared_mutex>

#include "device/device_api.h"

namespace chorus {

class EmulatedDeviceMemory {
 public:
  EmulatedDeviceMemory() = default;
  // Unmaps everything still allocated or opened.
  ~EmulatedDeviceMemory();
  EmulatedDeviceMemory(const EmulatedDeviceMemory&) = delete;
  EmulatedDeviceMemory& operator=(const EmulatedDeviceMemory&) = delete;

  // A new zero-filled region of `bytes` (nullptr for 0, as cudaMalloc); throws chorusSystemError naming the call.
  void* allocate(size_t bytes);
  // Releases a region allocate() returned (nullptr accepted); chorusInvalidArgument for any other pointer.
  void release(void* p);
  // True when p lies inside an allocated or opened region.
  bool contains(const void* p) const;

  // Describes the allocation starting at p (which must be an allocate() result, as CUDA wants an allocation's base).
  void exportHandle(void* p, DeviceIpcHandle* handle) const;
  // Maps a region exported by another process of this machine; returns its base.
  void* open(const DeviceIpcHandle& handle);
  // Unmaps a region open() returned.
  void close(void* p);
  // A duplicate of the memfd behind [p, p+bytes) (an allocation of this process) and p's offset in it: the
  // emulation's dma-buf. False when the range is not inside one allocation.
  bool exportFd(const void* p, size_t bytes, int* fd, uint64_t* offset) const;
  // The memfd's inode of the region holding p (0 when none): unique per live allocation.
  uint64_t regionId(const void* p) const;
  // The start of the region (allocated or opened) holding p, or nullptr when none does.
  void* regionBase(const void* p) const;

 private:
  struct Region {
    size_t bytes;
    int fd;  // the memfd (allocations), -1 (opened regions: their fd is closed once mapped)
    bool opened;
    uint64_t inode;
    uint64_t deviceId;
  };
  void* mapRegion(int fd, size_t bytes, const char* what);
  Region take(void* p, bool opened, const char* what);

  mutable std::shared_mutex mutex_;
  std::map<uintptr_t, Region> regions_;  // by base address
};

}  // namespace chorus
