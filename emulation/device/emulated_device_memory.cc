// The emulated device's memory (emulated_device_memory.h): "device" allocations in memfd-backed host memory, shared
// between processes as CUDA IPC shares a GPU's, for machines without a GPU.
#include "emulation/device/emulated_device_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <sstream>
#include <string>

#include "core/error.h"

namespace chorus {
namespace {

// The handle's bytes: enough to find the exporter's descriptor and to prove that it still names the same file.
struct EmulatedIpcDescriptor {
  uint32_t magic;
  int32_t pid;
  int32_t fd;
  uint32_t reserved;
  uint64_t offset;  // where the region starts in the file (always 0: one file per allocation)
  uint64_t bytes;
  uint64_t inode;
  uint64_t deviceId;
};
static_assert(sizeof(EmulatedIpcDescriptor) <= sizeof(DeviceIpcHandle));
constexpr uint32_t kDescriptorMagic = 0x43454d55;  // "UMEC"

std::string describePointer(const char* what, const void* p) {
  std::ostringstream os;
  os << "emulated device " << what << " of " << p;
  return os.str();
}

// A descriptor for the exporter's fd in this process: pidfd_getfd(2) first; /proc/<pid>/fd/<fd> where the kernel
// lacks it or refuses it (pidfd_getfd needs ptrace-attach rights; the /proc path only ptrace-read rights).
int fetchPeerFd(const EmulatedIpcDescriptor& d, const std::string& context) {
  int pidfdError = 0;
  const char* failedCall = "pidfd_open";
  const long pidfd = syscall(SYS_pidfd_open, d.pid, 0);
  if (pidfd >= 0) {
    const long fd = syscall(SYS_pidfd_getfd, static_cast<int>(pidfd), d.fd, 0);
    pidfdError = errno;
    failedCall = "pidfd_getfd";
    ::close(static_cast<int>(pidfd));
    if (fd >= 0) return static_cast<int>(fd);
  } else {
    pidfdError = errno;
  }
  if (pidfdError == ESRCH) throwSystemError(context + " (exporting process gone)", failedCall, pidfdError);
  const std::string path = "/proc/" + std::to_string(d.pid) + "/fd/" + std::to_string(d.fd);
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd >= 0) return fd;
  const int openError = errno;
  throwSystemError(context + " (" + failedCall + ": " + std::strerror(pidfdError) + "; then " + path + ")", "open",
                   openError);
}

}  // namespace

EmulatedDeviceMemory::~EmulatedDeviceMemory() {
  for (auto& [base, region] : regions_) {
    munmap(reinterpret_cast<void*>(base), region.bytes);
    if (region.fd >= 0) ::close(region.fd);
  }
}

void* EmulatedDeviceMemory::mapRegion(int fd, size_t bytes, const char* what) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    const int err = errno;
    throwSystemError(std::string("emulated device ") + what + " of " + std::to_string(bytes) + " bytes", "mmap", err);
  }
  return p;
}

void* EmulatedDeviceMemory::allocate(size_t bytes) {
  if (bytes == 0) return nullptr;
  const std::string context = "emulated device allocation of " + std::to_string(bytes) + " bytes";
  const int fd = memfd_create("chorus-emulated-device", MFD_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    throwSystemError(context, "memfd_create", err);
  }
  struct stat st {};
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0 || fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throwSystemError(context, "ftruncate/fstat", err);
  }
  void* p = nullptr;
  try {
    p = mapRegion(fd, bytes, "allocation");
  } catch (...) {
    ::close(fd);
    throw;
  }
  std::unique_lock<std::shared_mutex> lock(mutex_);
  regions_[reinterpret_cast<uintptr_t>(p)] =
      Region{bytes, fd, false, static_cast<uint64_t>(st.st_ino), static_cast<uint64_t>(st.st_dev)};
  return p;
}

EmulatedDeviceMemory::Region EmulatedDeviceMemory::take(void* p, bool opened, const char* what) {
  std::unique_lock<std::shared_mutex> lock(mutex_);
  auto it = regions_.find(reinterpret_cast<uintptr_t>(p));
  if (it == regions_.end() || it->second.opened != opened) {
    throwInvalidArgument(describePointer(what, p) + ": not the base of a region " +
                         (opened ? "opened with ipcOpen" : "allocated with deviceAlloc"));
  }
  Region region = it->second;
  regions_.erase(it);
  return region;
}

void EmulatedDeviceMemory::release(void* p) {
  if (p == nullptr) return;
  const Region region = take(p, false, "free");
  if (munmap(p, region.bytes) != 0) {
    const int err = errno;
    ::close(region.fd);
    throwSystemError(describePointer("free", p), "munmap", err);
  }
  ::close(region.fd);
}

bool EmulatedDeviceMemory::contains(const void* p) const {
  const auto address = reinterpret_cast<uintptr_t>(p);
  std::shared_lock<std::shared_mutex> lock(mutex_);
  auto it = regions_.upper_bound(address);
  if (it == regions_.begin()) return false;
  --it;
  return address - it->first < it->second.bytes;
}

bool EmulatedDeviceMemory::exportFd(const void* p, size_t bytes, int* fd, uint64_t* offset) const {
  const auto address = reinterpret_cast<uintptr_t>(p);
  std::shared_lock<std::shared_mutex> lock(mutex_);
  auto it = regions_.upper_bound(address);
  if (it == regions_.begin()) return false;
  --it;
  const Region& r = it->second;
  // The mapping covers whole pages: a page-aligned range may end past the allocation's last byte.
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t mapped = (r.bytes + page - 1) / page * page;
  if (r.opened || r.fd < 0 || address - it->first > mapped || bytes > mapped - (address - it->first)) return false;
  const int copy = ::fcntl(r.fd, F_DUPFD_CLOEXEC, 0);
  if (copy < 0) return false;
  *fd = copy;
  *offset = address - it->first;
  return true;
}

uint64_t EmulatedDeviceMemory::regionId(const void* p) const {
  const auto address = reinterpret_cast<uintptr_t>(p);
  std::shared_lock<std::shared_mutex> lock(mutex_);
  auto it = regions_.upper_bound(address);
  if (it == regions_.begin()) return 0;
  --it;
  return address - it->first < it->second.bytes ? it->second.inode : 0;
}

void* EmulatedDeviceMemory::regionBase(const void* p) const {
  const auto address = reinterpret_cast<uintptr_t>(p);
  std::shared_lock<std::shared_mutex> lock(mutex_);
  auto it = regions_.upper_bound(address);
  if (it == regions_.begin()) return nullptr;
  --it;
  return address - it->first < it->second.bytes ? reinterpret_cast<void*>(it->first) : nullptr;
}

void EmulatedDeviceMemory::exportHandle(void* p, DeviceIpcHandle* handle) const {
  std::shared_lock<std::shared_mutex> lock(mutex_);
  auto it = regions_.find(reinterpret_cast<uintptr_t>(p));
  if (it == regions_.end() || it->second.opened) {
    throwInvalidArgument(describePointer("IPC export", p) + ": not the base of a region allocated with deviceAlloc");
  }
  EmulatedIpcDescriptor d{};
  d.magic = kDescriptorMagic;
  d.pid = getpid();
  d.fd = it->second.fd;
  d.offset = 0;
  d.bytes = it->second.bytes;
  d.inode = it->second.inode;
  d.deviceId = it->second.deviceId;
  std::memset(handle->bytes, 0, sizeof(handle->bytes));
  std::memcpy(handle->bytes, &d, sizeof(d));
}

void* EmulatedDeviceMemory::open(const DeviceIpcHandle& handle) {
  EmulatedIpcDescriptor d{};
  std::memcpy(&d, handle.bytes, sizeof(d));
  std::ostringstream os;
  os << "emulated device IPC open of " << d.bytes << " bytes exported by pid " << d.pid << " (fd " << d.fd << ")";
  const std::string context = os.str();
  if (d.magic != kDescriptorMagic || d.bytes == 0) throwInvalidArgument(context + ": not an emulated IPC handle");
  // CUDA refuses to open a handle in the process that exported it; so does the emulation, so that code tested here
  // does not come to rely on it.
  if (d.pid == getpid()) {
    throw Error(chorusUnhandledCudaError, context +
                                              ": the handle was exported by this process (CUDA IPC handles "
                                              "open only in other processes)");
  }
  const int fd = fetchPeerFd(d, context);
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throwSystemError(context, "fstat", err);
  }
  // The fd number may have been reused since the export (a freed allocation): the file must be the one described.
  if (static_cast<uint64_t>(st.st_ino) != d.inode || static_cast<uint64_t>(st.st_dev) != d.deviceId ||
      static_cast<uint64_t>(st.st_size) < d.offset + d.bytes) {
    ::close(fd);
    throwInvalidArgument(context + ": the exporter's descriptor no longer names the exported allocation (freed?)");
  }
  void* p = nullptr;
  try {
    p = mapRegion(fd, d.bytes, "IPC mapping");
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);  // the mapping keeps the file alive
  std::unique_lock<std::shared_mutex> lock(mutex_);
  regions_[reinterpret_cast<uintptr_t>(p)] = Region{d.bytes, -1, true, d.inode, d.deviceId};
  return p;
}

void EmulatedDeviceMemory::close(void* p) {
  const Region region = take(p, true, "IPC close");
  if (munmap(p, region.bytes) != 0) {
    const int err = errno;
    throwSystemError(describePointer("IPC close", p), "munmap", err);
  }
}

}  // namespace chorus
