#include "algorithms/algorithms.h"
#include "algorithms/halving_doubling_exchange.h"
#include "algorithms/patterns/halving_doubling_pattern.h"
#include "core/datatype.h"

namespace chorus {

// Recursive halving, then a binomial gather of the reduced vblocks to the root. Ranks are relabelled so that the
// root is the last one, which is never a folding rank (at most the first n-1 ranks pair up).
void halvingDoublingReduce(PeerIO& io, const CallArgs& op) {
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
  const char* send = static_cast<const char*>(op.send);
  if (p.folds()) {
    exchangeAndReduce(io, realRank(p.foldPartner()), send, op.count, nullptr, nullptr, nullptr, 0, op.type,
                      op.reduction);
    return;
  }
  // Partial sums: on the root in recv; elsewhere in staging (a non-root's recv must stay untouched), holding only
  // the range this rank keeps after the first halving (everything when it absorbs a partner's data). The root
  // never absorbs, so an absorbing rank's fold lands in its staging directly.
  const Range firstKeep = blocks.elements(p.halvingKept(0));
  const size_t origin = isRoot || p.absorbs() ? 0 : firstKeep.begin;
  const size_t accElems = isRoot ? 0 : (p.absorbs() ? op.count : firstKeep.len);
  const size_t accBytes = (accElems * es + 63) / 64 * 64;
  char* staging = io.workspace(accBytes + firstKeep.len * es);
  char* acc = isRoot ? static_cast<char*>(op.recv) : staging;
  char* landing = staging + accBytes;
  auto accAt = [&](size_t elem) { return acc + (elem - origin) * es; };
  bool reduced = false;  // false: this rank's values are still its input
  auto srcAt = [&](size_t elem) -> const char* { return reduced ? accAt(elem) : send + elem * es; };
  if (p.absorbs()) {
    exchangeAndReduce(io, realRank(p.foldPartner()), nullptr, 0, accAt(0), send, accAt(0), op.count, op.type,
                      op.reduction);
    reduced = true;
  }
  for (int i = 0; i < p.steps(); ++i) {
    const Range give = blocks.elements(p.halvingSent(i)), keep = blocks.elements(p.halvingKept(i));
    exchangeAndReduce(io, realRank(p.halvingPartner(i)), srcAt(give.begin), give.len, landing, srcAt(keep.begin),
                      accAt(keep.begin), keep.len, op.type, op.reduction);
    reduced = true;
  }
  for (int i = 0; i < p.steps(); ++i) {
    if (p.gatherSends(i, vroot)) {
      const Range mine = blocks.elements(p.gatherSent(i));
      exchangeWithPeer(io, realRank(p.gatherPartner(i)), accAt(mine.begin), mine.len * es, nullptr, 0);
      return;  // handed over: nothing left to do
    }
    if (p.gatherReceives(i, vroot)) {
      const Range theirs = blocks.elements(p.gatherReceived(i));
      exchangeWithPeer(io, realRank(p.gatherPartner(i)), nullptr, 0, accAt(theirs.begin), theirs.len * es);
    }
  }
  if (op.reduction == chorusAvg) io.reducer().finishAverage(op.recv, op.count, op.type, n);
}

}  // namespace chorus
