// One ordered, reliable byte channel to one peer (Gloo's Pair, NCCL's connector); transports implement it.
#pragma once

#include <poll.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/error.h"
#include "transports/connection_capabilities.h"

namespace chorus {

// The core every transport implements; what only some can do (striping, peeking, single-copy hints, device
// memory sends, registration, progress no descriptor announces) are capabilities, found through capabilities().
// Messages complete in the order they were posted, per direction, so a request is just its sequence number.
class Connection {
 public:
  virtual ~Connection() = default;
  // Queues a send of `bytes` from buf, framed with `tag`; buf stays untouched by the caller until it completes.
  virtual uint64_t isend(const void* buf, size_t bytes, uint32_t tag) = 0;
  // Queues a receive of exactly `bytes` into buf; the peer's matching send must carry the same size and tag.
  virtual uint64_t irecv(void* buf, size_t bytes, uint32_t tag) = 0;
  // Posts a send of `bytes` from sendBuf (framed with sendTag) and a receive of as many into recvBuf (expecting
  // recvTag): two ranks trading data. May complete both before returning: true when both are done; either way
  // *sendId and *recvId name them. The default only posts; shared memory answers a tiny one here, without the
  // caller's progress loop.
  virtual bool exchange(const void* sendBuf, void* recvBuf, size_t bytes, uint32_t sendTag, uint32_t recvTag,
                        uint64_t* sendId, uint64_t* recvId) {
    *sendId = isend(sendBuf, bytes, sendTag);
    *recvId = irecv(recvBuf, bytes, recvTag);
    return false;
  }
  // Moves whatever can move without blocking; true when any byte moved. Throws chorus::Error on loss or bad frames.
  virtual bool progress() = 0;
  // Every send (receive) with id < sendsDone() (recvsDone()) has completed.
  virtual uint64_t sendsDone() const = 0;
  virtual uint64_t recvsDone() const = 0;
  // True when a posted send or receive is not yet complete.
  virtual bool busy() const = 0;
  // Bytes the oldest outstanding receive still waits for, where the transport can sleep until much of it has
  // arrived (addPollFds wakes then); 0 when none or when it cannot. CommIO stops spinning for large ones: sleeping
  // beats spinning on small pieces (fewer, larger copies; the kernel delivers without contending for the socket).
  virtual size_t pendingReceiveBytes() const = 0;
  // Adds the descriptors to sleep on while nothing can move (none for transports that cannot sleep on one).
  virtual void addPollFds(std::vector<pollfd>& fds) const = 0;
  // Tells the peer this side is closing on purpose (a communicator destroyed, not a process lost). Best effort.
  virtual void closeGracefully() = 0;
  // Tells the peer this side gave up (an error or an abort) and stops sending: a peer waiting on us then fails
  // at once with a message that says so, instead of waiting for its timeout. `lostPeer`: the rank whose loss is
  // the reason, passed on so that the peer's error names it (kNoRank: another reason). Best effort; idempotent.
  virtual void abandon(int lostPeer = kNoRank) = 0;
  // Adds descriptors whose hang-up means the peer may be gone (POLLRDHUP), unless it already said goodbye.
  virtual void addHangupFds(std::vector<pollfd>& fds) const = 0;
  // Called when a hang-up was seen: throws chorusRemoteError if the peer closed without a goodbye.
  virtual void checkAlive() = 0;
  // The peer's rank, and a short description ("tcp 10.0.0.2:4312 x2") for messages.
  virtual int peer() const = 0;
  virtual const char* describe() const = 0;
  // What this connection supports beyond this core (connection_capabilities.h); nothing by default. Callers look
  // it up once per connection and keep the pointers, so the hot path pays no lookup per message.
  virtual ConnectionCapabilities capabilities() { return {}; }
};

}  // namespace chorus
