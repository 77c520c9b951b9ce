#include "algorithms/algorithms.h"
#include "algorithms/halving_doubling_exchange.h"
#include "algorithms/patterns/halving_doubling_pattern.h"
#include "core/datatype.h"

namespace chorus {

// Van de Geijn: a binomial scatter of the vblocks from the root, then recursive doubling gathers them everywhere.
// Ranks are relabelled so that the root is the last one, which never folds; folding ranks get the whole result
// from their partners at the end.
void halvingDoublingBroadcast(PeerIO& io, const CallArgs& op) {
  const int n = io.size();
  const size_t es = typeSize(op.type), bytes = op.count * es;
  if (n == 1 || op.count == 0) {
    copyIfOutOfPlace(io, op.send, op.recv, bytes);
    return;
  }
  const RootLastLabels labels{op.root, n};
  auto realRank = [&](int label) { return labels.rankOf(label); };
  const HalvingDoublingPattern p{labels.labelOf(io.rank()), n};
  const BlockLayout blocks = BlockLayout::balanced(op.count, p);
  const int vroot = p.pow2() - 1;
  const bool isRoot = io.rank() == op.root;
  char* recv = static_cast<char*>(op.recv);
  if (p.folds()) {
    exchangeWithPeer(io, realRank(p.foldPartner()), nullptr, 0, recv, bytes);
    return;
  }
  // The root scatters from its send buffer (non-roots' send is never read) and copies it to recv meanwhile.
  const char* source = isRoot ? static_cast<const char*>(op.send) : recv;
  for (int i = 0; i < p.steps(); ++i) {
    if (p.scatterReceives(i, vroot)) {
      const Range mine = blocks.elements(p.scatterReceived(i));
      exchangeWithPeer(io, realRank(p.scatterPartner(i)), nullptr, 0, recv + mine.begin * es, mine.len * es);
    } else if (p.scatterSends(i, vroot)) {
      const Range theirs = blocks.elements(p.scatterSent(i));
      if (theirs.len > 0) io.isend(realRank(p.scatterPartner(i)), source + theirs.begin * es, theirs.len * es);
    }
  }
  if (isRoot) copyIfOutOfPlace(io, op.send, op.recv, bytes);
  io.waitAll();  // the scatter's sends read ranges the doubling may write again
  for (int i = 0; i < p.steps(); ++i) {
    const Range mine = blocks.elements(p.doublingSent(i)), theirs = blocks.elements(p.doublingReceived(i));
    exchangeWithPeer(io, realRank(p.doublingPartner(i)), recv + mine.begin * es, mine.len * es,
                     recv + theirs.begin * es, theirs.len * es);
  }
  if (p.absorbs()) exchangeWithPeer(io, realRank(p.foldPartner()), recv, bytes, nullptr, 0);
}

}  // namespace chorus
