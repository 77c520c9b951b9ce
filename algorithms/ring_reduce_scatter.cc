#include "algorithms/algorithms.h"
#include "algorithms/patterns/ring_pattern.h"
#include "algorithms/slice_pipeline.h"
#include "core/datatype.h"

namespace chorus {

void ringReduceScatter(PeerIO& io, const CallArgs& op) {
  const int n = io.size();
  const size_t es = typeSize(op.type);
  const size_t block = op.count;  // elements per rank
  if (n == 1) {
    copyIfOutOfPlace(io, op.send, op.recv, block * es);
    return;
  }
  RingPattern ring{io.rank(), n};
  const size_t k = slicesFor(block, 1, io.sliceBytes() / es);
  const char* send = static_cast<const char*>(op.send);
  char* recv = static_cast<char*>(op.recv);
  auto slice = [&](int c, size_t s) {
    Range part = splitEven(block, k, s);
    return Range{static_cast<size_t>(c) * block + part.begin, part.len};
  };
  // Partial sums of the steps before the last live in one block of workspace(), slice s at its place in the block, each
  // written again by the next step once its forward has gone. (Result slots, reused every few slices, made a rank
  // wait for a forward queued behind all its first-step sends: with 3 or more ranks and a block larger than the
  // links' buffering the ranks waited on each other in a circle, e.g. 3 ranks, 16 MiB, shared memory.)
  char* partial = n > 2 ? io.workspace(block * es) : nullptr;
  PipelineSpec spec = ringPipeline(io, op.type, op.reduction);
  spec.numInitial = k;
  spec.initial = [&](size_t s) {
    Range r = slice(ring.reduceScatterSendChunk(0), s);
    return OutgoingSlice{send + r.begin * es, r.len * es};
  };
  spec.numIncoming = static_cast<size_t>(n - 1) * k;
  spec.incoming = [&](size_t i) {
    int step = static_cast<int>(i / k);
    size_t s = i % k;
    Range r = slice(ring.reduceScatterRecvChunk(step), s);
    IncomingSlice in;
    in.bytes = r.len * es;
    in.reduceWith = send + r.begin * es;
    bool last = step == n - 2;
    const size_t at = splitEven(block, k, s).begin * es;
    in.out = last ? recv + at : partial + at;
    in.average = last && op.reduction == chorusAvg;
    in.forward = !last;
    in.outReused = step < n - 3;
    if (step > 0 && !last) in.waitForwardOf = i - k;
    return in;
  };
  runSlicePipeline(io, spec);
}

}  // namespace chorus
