// The unix-socket side of setting up a shared-memory pair: an abstract-namespace listener per rank, the hello
// each side sends with its inbound segment's descriptor attached (SCM_RIGHTS), and reading hellos without ever
// blocking on (or trusting) whoever connects.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <string>

#include "core/deadline.h"

namespace chorus {

// The first and only bytes each side sends on a pair's socket before it becomes a doorbell.
struct ShmHello {
  uint32_t magic;
  uint32_t version;
  uint64_t jobHash;     // keeps other jobs and communicators out
  int32_t from;         // the sender's rank
  int32_t to;           // the rank it means to reach
  uint32_t canReadYou;  // 1: the sender can process_vm_readv the receiver's memory (probed from its card)
  uint32_t reserved;
  uint64_t ringBytes;  // byte-ring size of the attached segment
};
inline constexpr uint32_t kShmHelloMagic = 0x48485343;  // "CSHH"
inline constexpr uint32_t kShmHelloVersion = 1;

// A stable 64-bit hash of a job key (FNV-1a).
uint64_t shmJobHash(const std::string& jobKey);

// Binds and listens on the abstract unix socket `name` (no leading NUL); non-blocking. -1 and *error on failure.
int shmListen(const std::string& name, std::string* error);

// Connects to the abstract unix socket `name`, retrying while it refuses or its backlog is full, until the
// deadline; returns a non-blocking descriptor. Throws (chorusTimeout / chorusSystemError) prefixed with context.
int shmDial(const std::string& name, Deadline deadline, const std::string& context);

// Sends the hello with `passFd` attached, waiting (poll) at most until the deadline. Throws prefixed with context.
void shmSendHello(int fd, const ShmHello& hello, int passFd, Deadline deadline, const std::string& context);

// The credentials of the process at the other end of a unix socket (SO_PEERCRED); false if unavailable.
bool shmPeerCredentials(int fd, ucred* cred);

// Reads one hello, and the descriptor that came with it, from a non-blocking socket as bytes arrive.
class ShmHelloReader {
 public:
  explicit ShmHelloReader(int fd) : fd_(fd) {}
  ~ShmHelloReader();
  ShmHelloReader(ShmHelloReader&& other) noexcept;
  ShmHelloReader& operator=(ShmHelloReader&& other) noexcept;
  ShmHelloReader(const ShmHelloReader&) = delete;
  ShmHelloReader& operator=(const ShmHelloReader&) = delete;

  // Reads what is there. True once the whole hello (with exactly one descriptor) is in; on a closed socket,
  // an error or a malformed message returns false with *why set; otherwise false with *why empty (wait more).
  bool step(std::string* why);
  int fd() const { return fd_; }
  const ShmHello& hello() const { return hello_; }
  // Hands over the socket (the caller closes it); -1 afterwards.
  int releaseSocket();
  // Hands over the received descriptor; -1 afterwards.
  int releasePassedFd();

 private:
  int fd_;
  ShmHello hello_{};
  size_t got_ = 0;
  int passedFd_ = -1;
  bool extraFds_ = false;  // more than one descriptor arrived: refused
};

}  // namespace chorus
