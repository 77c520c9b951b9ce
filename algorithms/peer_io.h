// What an algorithm may do: post sends and receives to peers, wait for them, reduce, borrow staging memory.
// Transports stay behind it; an algorithm never names one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/datatype.h"
#include "reduce/reducer.h"

namespace chorus {

class Connection;
struct Hierarchy;

// The two pools of staging slots: where slices arriving from a peer land, and where slices computed here wait to be
// sent on. An algorithm with no results to hold may land in both (the tree: one pool per child).
enum class SlotPool : int { kLanding = 0, kResults = 1 };

struct Request {
  Connection* conn = nullptr;
  bool isSend = false;
  uint64_t id = 0;
  size_t bytes = 0;  // what was posted (for traces)
};

class PeerIO {
 public:
  virtual ~PeerIO() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Posts a send to / receive from `peer`; the buffer must stay valid until the request completes.
  virtual Request isend(int peer, const void* buf, size_t bytes) = 0;
  virtual Request irecv(int peer, void* buf, size_t bytes) = 0;
  // Drives every busy connection until `r` completes; throws on loss, timeout, abort or mismatch.
  virtual void wait(const Request& r) = 0;
  // Waits for the receive `r` into `landing`, then out = landing op with (`count` elements; out may alias with).
  // An IO may reduce straight from where the bytes arrived instead (a compressed receive's wire buffer), leaving
  // `landing` unwritten: algorithms call this only where the arrival has no other use.
  virtual void waitAndReduce(const Request& r, const void* landing, void* out, const void* with, size_t count,
                             chorusDataType_t type, chorusRedOp_t op) {
    wait(r);
    reducer().reduce(out, landing, with, count, type, op);
  }
  // waitAndReduce, then sends `out` to `peer` and returns the send. An IO may prepare the send in the same pass (a
  // compressed link's encoding).
  virtual Request waitReduceAndSend(const Request& r, const void* landing, void* out, const void* with, size_t count,
                                    chorusDataType_t type, chorusRedOp_t op, int peer) {
    waitAndReduce(r, landing, out, with, count, type, op);
    return isend(peer, out, count * typeSize(type));
  }
  // Sends `bytes` from `send` to `peer` and receives as many from it into `recv` (the two must not overlap);
  // returns once both are done.
  virtual void exchange(int peer, const void* send, void* recv, size_t bytes) {
    Request s = isend(peer, send, bytes);
    Request q = irecv(peer, recv, bytes);
    wait(q);
    wait(s);
  }
  // Drives every busy connection until all posted requests of this call complete.
  virtual void waitAll() = 0;
  // Says that the sends posted from now on (in this call) are waited for together, no send buffer reused before all
  // are done: transports may then move them with one copy from smaller sizes (the SingleCopyHint capability of a
  // connection).
  virtual void postingTogether() {}
  virtual Reducer& reducer() = 0;
  // Copies bytes from src to dst (which may overlap) and returns once the copy is in place. Algorithms copy
  // through this, never with the CPU, since the buffers may be device memory; the default suits host memory.
  virtual void copy(void* dst, const void* src, size_t bytes) {
    if (bytes > 0) std::memmove(dst, src, bytes);
  }
  // Staging memory owned by the communicator and reused across calls: `slots` slices of sliceBytes() in each
  // pool (SlotPool), and one workspace of at least `bytes`.
  virtual char* slot(SlotPool pool, int index) = 0;
  virtual int slots() const = 0;
  virtual char* workspace(size_t bytes) = 0;
  // Bytes per pipelined slice (CHORUS_CHUNK_SIZE).
  virtual size_t sliceBytes() const = 0;
  // A second region of at least `bytes`, apart from workspace(): for algorithms built from other algorithms.
  virtual char* scratch(size_t bytes) = 0;
  // Which ranks share a host, for two-level algorithms; nullptr within a subgroup (levels do not nest).
  virtual const Hierarchy* hierarchy() const { return nullptr; }
};

}  // namespace chorus
