#include "algorithms/algorithms.h"
#include "algorithms/patterns/ring_pattern.h"
#include "algorithms/slice_pipeline.h"
#include "core/datatype.h"

namespace chorus {

void copyIfOutOfPlace(PeerIO& io, const void* send, void* recv, size_t bytes) {
  if (send != recv && bytes > 0) io.copy(recv, send, bytes);
}

void ringAllReduce(PeerIO& io, const CallArgs& op) {
  const int n = io.size();
  const size_t es = typeSize(op.type);
  if (n == 1) {
    copyIfOutOfPlace(io, op.send, op.recv, op.count * es);
    return;  // an average over one rank is the value itself
  }
  RingPattern ring{io.rank(), n};
  const size_t k = slicesFor(op.count, n, io.sliceBytes() / es);
  const char* send = static_cast<const char*>(op.send);
  char* recv = static_cast<char*>(op.recv);
  // Slice s of chunk c, in elements.
  auto slice = [&](int c, size_t s) {
    Range chunk = splitEven(op.count, n, c);
    Range part = splitEven(chunk.len, k, s);
    return Range{chunk.begin + part.begin, part.len};
  };
  PipelineSpec spec = ringPipeline(io, op.type, op.reduction);
  // Step 0 of the reduce-scatter sends the own chunk straight from the send buffer (no out-of-place copy:
  // every other chunk is first written by its reduction, and the own chunk comes back in the allgather).
  spec.numInitial = k;
  spec.initial = [&](size_t s) {
    Range r = slice(ring.allreduceSendChunk(0), s);
    return OutgoingSlice{send + r.begin * es, r.len * es};
  };
  spec.numIncoming = 2 * static_cast<size_t>(n - 1) * k;
  spec.incoming = [&](size_t i) {
    int step = static_cast<int>(i / k);
    size_t s = i % k;
    IncomingSlice in;
    if (step < n - 1) {  // reduce-scatter: reduce into recv, forward (the last step's result starts the allgather)
      Range r = slice(ring.allreduceRecvChunk(step), s);
      in.bytes = r.len * es;
      in.reduceWith = send + r.begin * es;
      in.out = recv + r.begin * es;
      in.average = op.reduction == chorusAvg && step == n - 2;
      in.forward = true;
    } else {  // allgather: land in place, forward all but the last step
      int t = step - (n - 1);
      Range r = slice(ring.allreduceGatherChunk(t), s);
      in.bytes = r.len * es;
      in.landing = recv + r.begin * es;
      in.forward = t < n - 2;
    }
    return in;
  };
  runSlicePipeline(io, spec);
}

}  // namespace chorus
