#include <utility>

#include "algorithms/algorithms.h"
#include "algorithms/patterns/ring_pattern.h"
#include "algorithms/slice_pipeline.h"
#include "core/datatype.h"

namespace chorus {

void chainReduce(PeerIO& io, const CallArgs& op) {
  const int n = io.size();
  const size_t es = typeSize(op.type);
  if (n == 1) {
    copyIfOutOfPlace(io, op.send, op.recv, op.count * es);
    return;
  }
  RingPattern ring{io.rank(), n};
  const int pos = ring.reducePosition(op.root);  // 0 starts the chain, n-1 is the root
  const bool isRoot = pos == n - 1;  // out here: the incoming lambda below outlives any inner block
  const size_t k = slicesFor(op.count, 1, io.sliceBytes() / es);
  const char* send = static_cast<const char*>(op.send);
  char* recv = static_cast<char*>(op.recv);
  PipelineSpec spec = ringPipeline(io, op.type, op.reduction);
  std::swap(spec.prev, spec.next);  // against the ring: the broadcast chain's links backwards (ring_pattern.h)
  if (pos == 0) {
    spec.numInitial = k;
    spec.initial = [&](size_t s) { return evenSlice(send, op.count, k, s, es); };
  } else {
    spec.numIncoming = k;
    spec.incoming = [&](size_t s) {
      Range r = splitEven(op.count, k, s);
      IncomingSlice in;
      in.bytes = r.len * es;
      in.reduceWith = send + r.begin * es;
      in.out = isRoot ? recv + r.begin * es : nullptr;  // non-roots never write recv (it may be NULL there)
      in.average = isRoot && op.reduction == chorusAvg;
      in.forward = !isRoot;
      return in;
    };
  }
  runSlicePipeline(io, spec);
}

}  // namespace chorus
