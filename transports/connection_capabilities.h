// What a connection may do beyond the core every transport implements: small interfaces a transport opts into,
// each one transport's strength, found through Connection::capabilities() by the code that needs them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "device/device_api.h"

namespace chorus {

class WindowRdmaWrites;  // transports/window_rdma.h

// Sends that may move with one copy when the caller says it posts them together (shared memory's
// process_vm_readv): the receiver reads the sender's buffer, so the sender waits for it.
class SingleCopyHint {
 public:
  // For the sends posted from now on: the caller posts them together and waits for them together, reusing no send
  // buffer before all are done (point-to-point batches, an alltoall), so the transport may move a message with one
  // copy, at the price of the sender waiting for the receiver, from smaller sizes. Off for pipelined collectives.
  virtual void setSingleCopyHint(bool on) = 0;

 protected:
  ~SingleCopyHint() = default;
};

// Messages striped over several sockets per rail (TCP's multi-socket rails).
class StripedSends {
 public:
  // How many of the pair's sockets per rail the messages posted from now on stripe over (0: the connection's
  // default; more than it has: all). Both ends must post each message with the same width: a call sets it alike on
  // every rank (CHORUS_ALGO's "/N", the autotuner).
  virtual void setStripeWidth(size_t width) = 0;
  // The most setStripeWidth can use.
  virtual size_t maxStripeWidth() const = 0;

 protected:
  ~StripedSends() = default;
};

// Looking at the next incoming message before a receive is posted for it: what a receive from any peer needs.
class TagPeeking {
 public:
  // True when the peer's next message has begun to arrive while no receive is posted here, with the tag it
  // carries in *tag; nothing is consumed.
  virtual bool peekIncomingTag(uint32_t* tag) = 0;

 protected:
  ~TagPeeking() = default;
};

// Sends straight from device memory, which the transport's adapter reads itself (ib GPUDirect RDMA), so device
// buffers need no staging through host memory.
class DeviceMemorySends {
 public:
  // True when isendDevice may be given memory of `device` (the adapter may not reach every runtime's memory).
  virtual bool sendsDeviceMemory(DeviceApi& device) = 0;
  // As Connection::isend, from device memory (only where sendsDeviceMemory); the CPU never touches the bytes.
  virtual uint64_t isendDevice(const void* buf, size_t bytes, uint32_t tag) = 0;

 protected:
  ~DeviceMemorySends() = default;
};

// Memory the caller registers ahead for the connection's sends (chorusCommRegister): a transport that sends
// registered memory without copying it (ib) keeps a region for it.
class MemoryRegistration {
 public:
  // Registers [p, p+bytes) until deregisterMemory(token); null when there is nothing to keep. Throws
  // chorus::Error when the transport cannot register it.
  virtual void* registerMemory(const void* p, size_t bytes) = 0;
  virtual void deregisterMemory(void* token) = 0;

 protected:
  ~MemoryRegistration() = default;
};

// Progress that waits on work no descriptor announces (a layered device connection's copies in flight).
class DescriptorlessProgress {
 public:
  // True while progress waits on such work: a caller then sleeps in short, growing periods instead of until a
  // descriptor fires.
  virtual bool movesWithoutDescriptor() const = 0;

 protected:
  ~DescriptorlessProgress() = default;
};

// Stores straight into the peer process's memory (shared memory's process_vm_writev, or a plain copy when the peer
// is this process): a window put's bytes reach the peer's registered buffer without a receive there.
class PeerMemoryWrites {
 public:
  // Copies `bytes` from src to `address` in the peer's address space and returns once they are there (visible to a
  // peer that later acquires a flag this side releases). 0 on success, else the errno the system gave (EPERM,
  // ENOSYS: the caller falls back to messages; ESRCH: the peer is gone). Throws nothing.
  virtual int writePeerMemory(uint64_t address, const void* src, size_t bytes) = 0;
  // Smaller puts go as messages: below this a store costs more than the message path (a system call).
  virtual size_t peerWriteMinBytes() const = 0;

 protected:
  ~PeerMemoryWrites() = default;
};

// What one connection supports beyond the core: null where it does not. A wrapper answers with what its inner
// connection supports (or its own), which a dynamic_cast on the wrapper would get wrong. The pointers live as long
// as the connection; callers look them up once per connection (per call or at setup), never per message.
struct ConnectionCapabilities {
  SingleCopyHint* singleCopy = nullptr;
  StripedSends* striping = nullptr;
  TagPeeking* peeking = nullptr;
  DeviceMemorySends* deviceMemory = nullptr;
  MemoryRegistration* registration = nullptr;
  DescriptorlessProgress* descriptorless = nullptr;
  PeerMemoryWrites* peerWrites = nullptr;
  WindowRdmaWrites* windowRdma = nullptr;
};

}  // namespace chorus
