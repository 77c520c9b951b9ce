#include "algorithms/algorithms.h"
#include "algorithms/halving_doubling_exchange.h"
#include "algorithms/patterns/halving_doubling_pattern.h"
#include "core/datatype.h"

namespace chorus {

// Recursive doubling over vblocks that are the blocks of the ranks each vrank stands for; a folding rank hands its
// block to its partner first and receives everything from it last.
void halvingDoublingAllGather(PeerIO& io, const CallArgs& op) {
  const int n = io.size(), rank = io.rank();
  const size_t es = typeSize(op.type), block = op.count, blockBytes = block * es;
  char* recv = static_cast<char*>(op.recv);
  char* own = recv + rank * blockBytes;
  if (n == 1 || block == 0) {
    copyIfOutOfPlace(io, op.send, own, blockBytes);
    return;
  }
  const HalvingDoublingPattern p{rank, n};
  const BlockLayout blocks = BlockLayout::perRank(block, p);
  if (p.folds()) {
    exchangeWithPeer(io, p.foldPartner(), op.send, blockBytes, nullptr, 0);
    exchangeWithPeer(io, p.foldPartner(), nullptr, 0, recv, blockBytes * n);
    return;
  }
  copyIfOutOfPlace(io, op.send, own, blockBytes);
  if (p.absorbs()) exchangeWithPeer(io, p.foldPartner(), nullptr, 0, recv + p.foldPartner() * blockBytes, blockBytes);
  for (int i = 0; i < p.steps(); ++i) {
    const Range mine = blocks.elements(p.doublingSent(i)), theirs = blocks.elements(p.doublingReceived(i));
    exchangeWithPeer(io, p.doublingPartner(i), recv + mine.begin * es, mine.len * es, recv + theirs.begin * es,
                     theirs.len * es);
  }
  if (p.absorbs()) exchangeWithPeer(io, p.foldPartner(), recv, blockBytes * n, nullptr, 0);
}

}  // namespace chorus
