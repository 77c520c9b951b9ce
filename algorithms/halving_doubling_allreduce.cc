#include "algorithms/algorithms.h"
#include "algorithms/halving_doubling_exchange.h"
#include "algorithms/patterns/halving_doubling_pattern.h"
#include "core/datatype.h"

namespace chorus {

// Rabenseifner: recursive halving leaves vrank v with the reduction of vblock v, recursive doubling spreads the
// vblocks; ranks beyond the power of two fold into a partner first and get the result back last.
void halvingDoublingAllReduce(PeerIO& io, const CallArgs& op) {
  const int n = io.size();
  const size_t es = typeSize(op.type), bytes = op.count * es;
  if (n == 1 || op.count == 0) {
    copyIfOutOfPlace(io, op.send, op.recv, bytes);
    return;  // an average over one rank is the value itself
  }
  const HalvingDoublingPattern p{io.rank(), n};
  const BlockLayout blocks = BlockLayout::balanced(op.count, p);
  const char* send = static_cast<const char*>(op.send);
  char* recv = static_cast<char*>(op.recv);
  if (p.folds()) {
    exchangeAndReduce(io, p.foldPartner(), send, op.count, nullptr, nullptr, nullptr, 0, op.type, op.reduction);
    exchangeWithPeer(io, p.foldPartner(), nullptr, 0, recv, bytes);
    return;
  }
  const bool inPlace = op.send == op.recv;
  // Partial sums live in recv; what arrives lands in staging first (all of it for an in-place fold).
  const size_t firstKeep = blocks.elements(p.halvingKept(0)).len;
  char* landing = io.workspace((p.absorbs() && inPlace ? op.count : firstKeep) * es);
  const char* src = send;  // where this rank's current values are: its input until the first reduction
  if (p.absorbs()) {
    exchangeAndReduce(io, p.foldPartner(), nullptr, 0, inPlace ? landing : recv, send, recv, op.count, op.type,
                      op.reduction);
    src = recv;
  }
  for (int i = 0; i < p.steps(); ++i) {
    const Range give = blocks.elements(p.halvingSent(i)), keep = blocks.elements(p.halvingKept(i));
    exchangeAndReduce(io, p.halvingPartner(i), src + give.begin * es, give.len, landing, src + keep.begin * es,
                      recv + keep.begin * es, keep.len, op.type, op.reduction);
    src = recv;
  }
  if (op.reduction == chorusAvg) {
    const Range own = blocks.elements(BlockRange{p.vrank(), 1});
    io.reducer().finishAverage(recv + own.begin * es, own.len, op.type, n);
  }
  for (int i = 0; i < p.steps(); ++i) {
    const Range mine = blocks.elements(p.doublingSent(i)), theirs = blocks.elements(p.doublingReceived(i));
    exchangeWithPeer(io, p.doublingPartner(i), recv + mine.begin * es, mine.len * es, recv + theirs.begin * es,
                     theirs.len * es);
  }
  if (p.absorbs()) exchangeWithPeer(io, p.foldPartner(), recv, bytes, nullptr, 0);
}

}  // namespace chorus
