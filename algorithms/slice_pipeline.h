// The engine under every ring and chain algorithm (NCCL's recvReduceSend / recvCopySend, host side):
// slices arrive from `prev` in order, are reduced or kept, and are forwarded to `next` while later slices are
// still on the wire.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "algorithms/peer_io.h"

namespace chorus {

// What to do with the i-th slice arriving from prev.
struct IncomingSlice {
  void* landing = nullptr;          // receive straight here; nullptr: into a staging slot
  size_t bytes = 0;
  const void* reduceWith = nullptr; // non-null: out = arrived op reduceWith (then landing must be nullptr)
  void* out = nullptr;              // where the reduction goes; nullptr: a result slot (only to forward it)
  bool average = false;             // divide `out` by nranks after this reduction (the last one of an avg)
  bool forward = false;             // send the slice's final bytes on to next
  // `out` is a region a later slice writes again: keep this slice's forward so that one can wait for it.
  bool outReused = false;
  // Before writing `out`, wait for the forward of incoming slice #waitForwardOf (which read the same bytes; it
  // was marked outReused). SIZE_MAX: nothing to wait for.
  size_t waitForwardOf = SIZE_MAX;
};

// A slice sent before anything arrives (from the caller's own buffer).
struct OutgoingSlice {
  const void* data = nullptr;
  size_t bytes = 0;
};

struct PipelineSpec {
  int prev = -1, next = -1;
  chorusDataType_t type = chorusFloat32;
  chorusRedOp_t reduction = chorusSum;
  size_t numInitial = 0;
  std::function<OutgoingSlice(size_t)> initial;
  size_t numIncoming = 0;
  std::function<IncomingSlice(size_t)> incoming;
  // Called once the initial sends are posted (e.g. the out-of-place copy that overlaps them).
  std::function<void()> afterInitialPosted;
};

// A spec along the ring (prev = rank - 1, next = rank + 1) for this type and op, with nothing to move yet.
PipelineSpec ringPipeline(const PeerIO& io, chorusDataType_t type, chorusRedOp_t op);

// Slice s of k (balanced, in elements) of the `count` elements at base.
OutgoingSlice evenSlice(const void* base, size_t count, size_t k, size_t s, size_t elemSize);

// Runs the pipeline to completion: every send done, every slice processed.
void runSlicePipeline(PeerIO& io, const PipelineSpec& spec);

}  // namespace chorus
