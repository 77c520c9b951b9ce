#include "algorithms/algorithms.h"
#include "algorithms/halving_doubling_exchange.h"
#include "algorithms/patterns/halving_doubling_pattern.h"
#include "core/datatype.h"

namespace chorus {

// Recursive halving over vblocks that are the blocks of the ranks each vrank stands for, in rank order: vrank v
// ends with its own ranks' blocks, so no permutation is needed; an absorbing rank hands its partner's block back.
void halvingDoublingReduceScatter(PeerIO& io, const CallArgs& op) {
  const int n = io.size(), rank = io.rank();
  const size_t es = typeSize(op.type), block = op.count, blockBytes = block * es, total = block * n;
  if (n == 1 || block == 0) {
    copyIfOutOfPlace(io, op.send, op.recv, blockBytes);
    return;
  }
  const HalvingDoublingPattern p{rank, n};
  const BlockLayout blocks = BlockLayout::perRank(block, p);
  const char* send = static_cast<const char*>(op.send);
  char* recv = static_cast<char*>(op.recv);
  if (p.folds()) {
    exchangeAndReduce(io, p.foldPartner(), send, total, nullptr, nullptr, nullptr, 0, op.type, op.reduction);
    exchangeWithPeer(io, p.foldPartner(), nullptr, 0, recv, blockBytes);
    return;
  }
  const bool inPlace = recv == send + rank * blockBytes;
  // Partial sums: in place, in the caller's buffer (its other blocks are scratch); otherwise in staging, holding
  // only the range this rank keeps after the first halving (everything when it absorbs a partner's data).
  const Range firstKeep = blocks.elements(p.halvingKept(0));
  const size_t origin = inPlace || p.absorbs() ? 0 : firstKeep.begin;
  const size_t accElems = inPlace ? 0 : (p.absorbs() ? total : firstKeep.len);
  const size_t accBytes = (accElems * es + 63) / 64 * 64;
  const size_t landingElems = p.absorbs() && inPlace ? total : firstKeep.len;
  char* staging = io.workspace(accBytes + landingElems * es);
  char* acc = inPlace ? const_cast<char*>(send) : staging;
  char* landing = staging + accBytes;
  auto accAt = [&](size_t elem) { return acc + (elem - origin) * es; };
  bool reduced = false;  // false: this rank's values are still its input
  auto srcAt = [&](size_t elem) -> const char* { return reduced ? accAt(elem) : send + elem * es; };
  if (p.absorbs()) {
    exchangeAndReduce(io, p.foldPartner(), nullptr, 0, inPlace ? landing : accAt(0), send, accAt(0), total, op.type,
                      op.reduction);
    reduced = true;
  }
  for (int i = 0; i < p.steps(); ++i) {
    const Range give = blocks.elements(p.halvingSent(i)), keep = blocks.elements(p.halvingKept(i));
    exchangeAndReduce(io, p.halvingPartner(i), srcAt(give.begin), give.len, landing, srcAt(keep.begin),
                      accAt(keep.begin), keep.len, op.type, op.reduction);
    reduced = true;
  }
  const Range own = blocks.elements(BlockRange{p.vrank(), 1});  // this rank's block, and its partner's if it absorbs
  if (op.reduction == chorusAvg) io.reducer().finishAverage(accAt(own.begin), own.len, op.type, n);
  if (p.absorbs()) {
    exchangeWithPeer(io, p.foldPartner(), accAt(static_cast<size_t>(p.foldPartner()) * block), blockBytes, nullptr, 0);
  }
  copyIfOutOfPlace(io, accAt(static_cast<size_t>(rank) * block), recv, blockBytes);
}

}  // namespace chorus
