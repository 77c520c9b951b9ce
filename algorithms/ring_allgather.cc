#include "algorithms/algorithms.h"
#include "algorithms/patterns/ring_pattern.h"
#include "algorithms/slice_pipeline.h"
#include "core/datatype.h"

namespace chorus {

void ringAllGather(PeerIO& io, const CallArgs& op) {
  const int n = io.size();
  const size_t es = typeSize(op.type);
  const size_t blockBytes = op.count * es;
  char* recv = static_cast<char*>(op.recv);
  char* own = recv + static_cast<size_t>(io.rank()) * blockBytes;
  if (n == 1) {
    copyIfOutOfPlace(io, op.send, own, blockBytes);
    return;
  }
  RingPattern ring{io.rank(), n};
  const size_t k = slicesFor(op.count, 1, io.sliceBytes() / es);
  const char* send = static_cast<const char*>(op.send);
  PipelineSpec spec = ringPipeline(io, op.type, chorusSum);
  spec.numInitial = k;
  spec.initial = [&](size_t s) { return evenSlice(send, op.count, k, s, es); };
  spec.afterInitialPosted = [&] { copyIfOutOfPlace(io, op.send, own, blockBytes); };
  spec.numIncoming = static_cast<size_t>(n - 1) * k;
  spec.incoming = [&](size_t i) {
    int t = static_cast<int>(i / k);
    Range r = splitEven(op.count, k, i % k);
    IncomingSlice in;
    in.bytes = r.len * es;
    in.landing = recv + static_cast<size_t>(ring.allgatherRecvChunk(t)) * blockBytes + r.begin * es;
    in.forward = t < n - 2;
    return in;
  };
  runSlicePipeline(io, spec);
}

}  // namespace chorus
