// A mapped shared-memory segment holding one direction of a pair (transports/shm/shm_layout.h). Created in
// /dev/shm and unlinked at once, so that nothing is left there whatever way the processes end; the peer gets
// the descriptor over the pair's unix socket.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace chorus {

class ShmSegment {
 public:
  ShmSegment() = default;
  // Creates, reserves (posix_fallocate: ENOSPC now rather than SIGBUS later), maps and initialises a segment
  // whose byte ring holds ringBytes; its name is gone from /dev/shm before this returns. Throws chorusSystemError
  // prefixed with `context` naming the call and the system's error (with advice for a full /dev/shm), except
  // that with `noSpace` given a full /dev/shm sets *noSpace and returns an empty segment (base() null).
  static ShmSegment create(size_t ringBytes, const std::string& context, bool* noSpace = nullptr);
  // Maps the segment behind fd (taking ownership of fd) and validates its header against its real size;
  // throws chorusRemoteError prefixed with `context` if it is not a segment of this layout.
  static ShmSegment adopt(int fd, const std::string& context);
  ~ShmSegment();
  ShmSegment(ShmSegment&& other) noexcept;
  ShmSegment& operator=(ShmSegment&& other) noexcept;
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;

  // The descriptor while still held (to pass to the peer), else -1.
  int fd() const { return fd_; }
  // Closes the descriptor; the mapping stays.
  void closeFd();
  void* base() const { return base_; }
  size_t bytes() const { return bytes_; }
  size_t ringBytes() const;
  // Writes zeros over [from, from + bytes) of a mapping whose pages are still zero: this process's first touch of
  // each page, paid now rather than on a ring's first lap. Only for memory this process alone writes.
  static void touchPages(void* from, size_t bytes);

 private:
  void reset();
  int fd_ = -1;
  void* base_ = nullptr;
  size_t bytes_ = 0;
};

// Whether segments can be made here: /dev/shm exists, is writable and has `need` bytes free. On false, `why`
// says what was found and what was needed.
bool devShmUsable(size_t need, std::string* why);

}  // namespace chorus
