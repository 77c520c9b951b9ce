#include "transports/shm/shm_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <new>
#include <random>

#include "core/byte_text.h"
#include "core/error.h"
#include "transports/shm/shm_layout.h"

namespace chorus {

namespace {

constexpr const char* kDevShm = "/dev/shm";

// A name no other process or communicator uses: pid, a per-process counter and a random word.
std::string uniqueName() {
  static std::atomic<uint64_t> counter{0};
  static const uint64_t salt = [] {
    std::random_device rd;
    return (static_cast<uint64_t>(rd()) << 32) | rd();
  }();
  char name[96];
  std::snprintf(name, sizeof(name), "/chorus-%d-%llu-%016llx", static_cast<int>(getpid()),
                static_cast<unsigned long long>(counter.fetch_add(1)), static_cast<unsigned long long>(salt));
  return name;
}

}  // namespace

// A process's first touch of each page of a shared mapping costs ~2-3 us here even after MAP_POPULATE (4 MiB: 2.5 ms
// to write, 2 ms to read). Untouched, a ring's first lap pays it inside calls, up to tens of times their usual time
// (perf/results/small_calls.md, "The shared-memory ring's first lap"). Zeroing pages that are zero already changes
// nothing a peer can see.
void ShmSegment::touchPages(void* from, size_t bytes) { std::memset(from, 0, bytes); }

ShmSegment ShmSegment::create(size_t ringBytes, const std::string& context, bool* noSpace) {
  const size_t bytes = shm::segmentBytes(ringBytes);
  const std::string name = uniqueName();
  ShmSegment s;
  s.fd_ = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (s.fd_ < 0) throwSystemError(context + ": shm segment " + std::string(kDevShm) + name, "shm_open", errno);
  // Unlinked before anything else can fail: from here on only the descriptors and mappings keep it alive.
  if (::shm_unlink(name.c_str()) != 0) throwSystemError(context + ": shm segment " + name, "shm_unlink", errno);
  int err = ::posix_fallocate(s.fd_, 0, static_cast<off_t>(bytes));
  if (err == ENOSPC && noSpace) {
    *noSpace = true;
    return ShmSegment();
  }
  if (err != 0) {
    std::string advice = err == ENOSPC ? " (" + std::string(kDevShm) + " is full: each shared-memory peer needs " +
                                             formatBytes(bytes) +
                                             " here; give the container more (docker --shm-size), "
                                             "lower CHORUS_SHM_BUFFER, or set CHORUS_TRANSPORT=tcp)"
                                       : "";
    throw Error(chorusSystemError, context + ": reserving " + std::to_string(bytes) + " bytes in " + kDevShm +
                                       ": posix_fallocate failed: " + std::strerror(err) + advice);
  }
  s.bytes_ = bytes;
  s.base_ = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, s.fd_, 0);
  if (s.base_ == MAP_FAILED) {
    s.base_ = nullptr;
    throwSystemError(context + ": mapping " + std::to_string(bytes) + " bytes of shared memory", "mmap", errno);
  }
  // The pages are fresh (zero), so every atomic starts at 0 and every record's seq at 0 (none published). Writing
  // them anyway is this process's first touch of each page (see touchPages).
  touchPages(s.base_, bytes);
  auto* control = new (s.base_) shm::RingControl{};
  control->header = shm::SegmentHeader{shm::kSegmentMagic, shm::kLayoutVersion, shm::kRecordSlots, 0, ringBytes, bytes};
  return s;
}

ShmSegment ShmSegment::adopt(int fd, const std::string& context) {
  ShmSegment s;
  s.fd_ = fd;
  struct stat st {};
  if (::fstat(fd, &st) != 0) throwSystemError(context + ": the peer's shm segment", "fstat", errno);
  auto bad = [&](const std::string& why) {
    throw Error(chorusRemoteError, context + ": the descriptor the peer sent is not a Chorus shm segment: " + why);
  };
  if (!S_ISREG(st.st_mode)) bad("not a regular file");
  const size_t bytes = static_cast<size_t>(st.st_size);
  if (bytes < shm::segmentBytes(0) || bytes > shm::segmentBytes(size_t{1} << 30)) {
    bad("size " + std::to_string(bytes));
  }
  s.bytes_ = bytes;
  s.base_ = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  if (s.base_ == MAP_FAILED) {
    s.base_ = nullptr;
    throwSystemError(context + ": mapping the peer's " + std::to_string(bytes) + "-byte shm segment", "mmap", errno);
  }
  const shm::SegmentHeader& h = shm::controlOf(s.base_)->header;
  if (h.magic != shm::kSegmentMagic || h.version != shm::kLayoutVersion) bad("bad magic or version");
  if (h.recordSlots != shm::kRecordSlots || h.totalBytes != bytes || shm::segmentBytes(h.ringBytes) != bytes ||
      h.ringBytes == 0) {
    bad("inconsistent header");
  }
  return s;
}

size_t ShmSegment::ringBytes() const { return base_ ? shm::controlOf(base_)->header.ringBytes : 0; }

void ShmSegment::closeFd() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void ShmSegment::reset() {
  closeFd();
  if (base_) ::munmap(base_, bytes_);
  base_ = nullptr;
  bytes_ = 0;
}

ShmSegment::~ShmSegment() { reset(); }

ShmSegment::ShmSegment(ShmSegment&& o) noexcept : fd_(o.fd_), base_(o.base_), bytes_(o.bytes_) {
  o.fd_ = -1;
  o.base_ = nullptr;
  o.bytes_ = 0;
}

ShmSegment& ShmSegment::operator=(ShmSegment&& o) noexcept {
  if (this != &o) {
    reset();
    std::swap(fd_, o.fd_);
    std::swap(base_, o.base_);
    std::swap(bytes_, o.bytes_);
  }
  return *this;
}

bool devShmUsable(size_t need, std::string* why) {
  struct statvfs vfs {};
  if (::statvfs(kDevShm, &vfs) != 0) {
    *why = std::string(kDevShm) + " is not there (statvfs: " + std::strerror(errno) + ")";
    return false;
  }
  if (::access(kDevShm, W_OK) != 0) {
    *why = std::string(kDevShm) + " is not writable (" + std::strerror(errno) + ")";
    return false;
  }
  const size_t avail = static_cast<size_t>(vfs.f_bavail) * vfs.f_frsize;
  if (avail < need) {
    *why = std::string(kDevShm) + " has " + formatBytes(avail) + " free, less than the " + formatBytes(need) +
           " needed";
    return false;
  }
  // The same call the segments will make, so that a mount that refuses it (read-only, noexec oddities, seccomp)
  // is found now and the pair falls back instead of failing at connect.
  const std::string name = uniqueName();
  int fd = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    *why = "shm_open in " + std::string(kDevShm) + " failed: " + std::strerror(errno);
    return false;
  }
  ::shm_unlink(name.c_str());
  ::close(fd);
  return true;
}

}  // namespace chorus
