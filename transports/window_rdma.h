// Writes straight into a peer's registered memory by the adapter (ib RDMA write with immediate): a window put
// (chorus.h) lands at the target without a receive posted for its bytes and without its CPU touching them; the
// put's last write carries a small immediate that the target's progress reads in order with the connection's
// messages. A capability of the connection (connection_capabilities.h), used by the window channel.
#pragma once

#include <cstddef>
#include <cstdint>

namespace chorus {

class WindowRdmaWrites {
 public:
  // The largest immediate a write may carry (30 bits: the transport keeps the rest of its immediates for itself).
  static constexpr uint32_t kMaxImmediate = (1u << 30) - 1;

  // Registers [base, base + bytes) (bytes > 0) so that the peer may write into it; *key is what the peer names it
  // by. Returns a token for unexposeMemory. Throws chorus::Error naming the verb and the system's text.
  virtual void* exposeMemory(void* base, size_t bytes, uint32_t* key) = 0;
  virtual void unexposeMemory(void* token) = 0;
  // Writes `bytes` from src to `address` in the peer's memory (named by key), behind every message and write posted
  // before on this connection; with `immediate` (at most kMaxImmediate) the peer receives it once the bytes are in.
  // Returns a send id (sendsDone() passes it once src may be reused: at posting where the adapter copied the bytes
  // into the work request, else at the write's completion).
  virtual uint64_t iwrite(const void* src, size_t bytes, uint64_t address, uint32_t key, const uint32_t* immediate) = 0;
  // The oldest immediate that arrived and is not yet taken, and how many of the peer's messages (receive ids below
  // this number) had arrived before it. False when none waits.
  virtual bool peekImmediate(uint32_t* immediate, uint64_t* messagesBefore) const = 0;
  virtual void popImmediate() = 0;
  // True while writes (or messages) posted on this connection are not yet complete at the peer.
  virtual bool writesInFlight() const = 0;

 protected:
  ~WindowRdmaWrites() = default;
};

}  // namespace chorus
