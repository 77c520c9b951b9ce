#include "algorithms/slice_pipeline.h"

#include <deque>
#include <utility>
#include <vector>

#include "algorithms/patterns/ring_pattern.h"
#include "core/datatype.h"
#include "core/error.h"

namespace chorus {

PipelineSpec ringPipeline(const PeerIO& io, chorusDataType_t type, chorusRedOp_t op) {
  RingPattern ring{io.rank(), io.size()};
  PipelineSpec spec;
  spec.prev = ring.prev();
  spec.next = ring.next();
  spec.type = type;
  spec.reduction = op;
  return spec;
}

OutgoingSlice evenSlice(const void* base, size_t count, size_t k, size_t s, size_t elemSize) {
  Range r = splitEven(count, k, s);
  return OutgoingSlice{static_cast<const char*>(base) + r.begin * elemSize, r.len * elemSize};
}

void runSlicePipeline(PeerIO& io, const PipelineSpec& spec) {
  const size_t esize = typeSize(spec.type);
  for (size_t i = 0; i < spec.numInitial; ++i) {
    OutgoingSlice s = spec.initial(i);
    io.isend(spec.next, s.data, s.bytes);
  }
  if (spec.afterInitialPosted) spec.afterInitialPosted();

  // Receives run ahead of processing by up to `window` slices; staged ones use landing slot (i % window),
  // which is free again once slice i - window has been processed.
  const size_t window = static_cast<size_t>(io.slots());
  struct Posted {
    Request req;
    IncomingSlice slice;
  };
  std::vector<Posted> ring(window);
  std::vector<Request> resultSend(window);  // the forward still reading each result slot
  std::vector<bool> resultBusy(window, false);
  size_t posted = 0, resultsUsed = 0;
  // Forwards from reused `out` regions, oldest first (each is waited for by one later slice, in index order).
  std::deque<std::pair<size_t, Request>> reusedForwards;
  for (size_t done = 0; done < spec.numIncoming; ++done) {
    while (posted < spec.numIncoming && posted - done < window) {
      Posted& p = ring[posted % window];
      p.slice = spec.incoming(posted);
      if (p.slice.bytes > io.sliceBytes() && !p.slice.landing) throwInternal("staged slice larger than a slot");
      void* dst = p.slice.landing ? p.slice.landing : io.slot(SlotPool::kLanding, static_cast<int>(posted % window));
      p.req = io.irecv(spec.prev, dst, p.slice.bytes);
      ++posted;
    }
    Posted& p = ring[done % window];
    const IncomingSlice& s = p.slice;
    if (!s.reduceWith) {
      io.wait(p.req);
      if (s.forward) io.isend(spec.next, s.landing, s.bytes);
      continue;
    }
    // A reduced slice: its output made free first, then the arrival waited for and reduced in one step.
    void* out = s.out;
    if (s.waitForwardOf != SIZE_MAX) {
      while (!reusedForwards.empty() && reusedForwards.front().first < s.waitForwardOf) reusedForwards.pop_front();
      if (!reusedForwards.empty() && reusedForwards.front().first == s.waitForwardOf) {
        io.wait(reusedForwards.front().second);
        reusedForwards.pop_front();
      }
    }
    size_t k = window;  // the result slot used, if any
    if (!out) {
      k = resultsUsed++ % window;
      if (resultBusy[k]) io.wait(resultSend[k]);
      resultBusy[k] = false;
      out = io.slot(SlotPool::kResults, static_cast<int>(k));
    }
    size_t count = s.bytes / esize;
    const void* arrived = io.slot(SlotPool::kLanding, static_cast<int>(done % window));
    // A forward of the plain sum leaves in the same step (an IO may encode it in the reduction's pass).
    const bool sendWithReduce = s.forward && !s.average;
    Request forwarded;
    if (sendWithReduce) {
      forwarded = io.waitReduceAndSend(p.req, arrived, out, s.reduceWith, count, spec.type, spec.reduction, spec.next);
    } else {
      io.waitAndReduce(p.req, arrived, out, s.reduceWith, count, spec.type, spec.reduction);
    }
    if (s.average) io.reducer().finishAverage(out, count, spec.type, io.size());
    if (s.forward) {
      Request r = sendWithReduce ? forwarded : io.isend(spec.next, out, s.bytes);
      if (k < window) {
        resultSend[k] = r;
        resultBusy[k] = true;
      } else if (s.outReused) {
        reusedForwards.emplace_back(done, r);
      }
    }
  }
  io.waitAll();
}

}  // namespace chorus
