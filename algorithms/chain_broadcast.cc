#include "algorithms/algorithms.h"
#include "algorithms/patterns/ring_pattern.h"
#include "algorithms/slice_pipeline.h"
#include "core/datatype.h"

namespace chorus {

void chainBroadcast(PeerIO& io, const CallArgs& op) {
  const int n = io.size();
  const size_t es = typeSize(op.type);
  const bool isRoot = io.rank() == op.root;
  if (n == 1) {
    copyIfOutOfPlace(io, op.send, op.recv, op.count * es);
    return;
  }
  RingPattern ring{io.rank(), n};
  const int pos = ring.broadcastPosition(op.root);
  const size_t k = slicesFor(op.count, 1, io.sliceBytes() / es);
  const char* send = static_cast<const char*>(op.send);
  char* recv = static_cast<char*>(op.recv);
  PipelineSpec spec = ringPipeline(io, op.type, chorusSum);
  if (isRoot) {
    spec.numInitial = k;
    spec.initial = [&](size_t s) { return evenSlice(send, op.count, k, s, es); };
    spec.afterInitialPosted = [&] { copyIfOutOfPlace(io, op.send, op.recv, op.count * es); };
  } else {
    spec.numIncoming = k;
    spec.incoming = [&](size_t s) {
      Range r = splitEven(op.count, k, s);
      IncomingSlice in;
      in.bytes = r.len * es;
      in.landing = recv + r.begin * es;
      in.forward = pos < n - 1;
      return in;
    };
  }
  runSlicePipeline(io, spec);
}

}  // namespace chorus
