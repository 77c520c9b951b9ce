// Alltoall and alltoallv by pairwise exchange (MPI's pairwise algorithm): at step s (1..p-1) rank r sends its block
// for rank r+s and receives the block of rank r-s, so every step pairs distinct peers and no rank is the target of
// two senders at once. Every step is posted at once, in that staggered order, and driven together: the transports
// move the steps as their peers arrive, with no round trip between steps. The own block is a local copy.
// Alltoallv exchanges a message with every peer even when its count is 0: a pair whose counts disagree then fails
// on the receiving side's size check (naming both ranks) instead of leaving one side waiting.
#include "algorithms/algorithms.h"
#include "core/datatype.h"

namespace chorus {
namespace {

// Where a peer's block lives in a buffer, and its size, for both calls.
struct BlockAt {
  size_t offset;  // bytes
  size_t bytes;
};

template <class SendBlock, class RecvBlock>
void exchangeBlocks(PeerIO& io, const CallArgs& op, SendBlock sendBlock, RecvBlock recvBlock) {
  const int n = io.size(), r = io.rank();
  const char* send = static_cast<const char*>(op.send);
  char* recv = static_cast<char*>(op.recv);
  io.postingTogether();
  for (int s = 1; s < n; ++s) {
    const int from = (r - s + n) % n;
    const BlockAt in = recvBlock(from);
    io.irecv(from, recv + in.offset, in.bytes);
  }
  for (int s = 1; s < n; ++s) {
    const int to = (r + s) % n;
    const BlockAt out = sendBlock(to);
    io.isend(to, send + out.offset, out.bytes);
  }
  const BlockAt mineOut = sendBlock(r), mineIn = recvBlock(r);
  if (mineOut.bytes > 0) io.copy(recv + mineIn.offset, send + mineOut.offset, mineOut.bytes);
  io.waitAll();
}

}  // namespace

void pairwiseAllToAll(PeerIO& io, const CallArgs& op) {
  const size_t block = op.count * typeSize(op.type);
  auto at = [block](int peer) { return BlockAt{static_cast<size_t>(peer) * block, block}; };
  exchangeBlocks(io, op, at, at);
}

void pairwiseAllToAllv(PeerIO& io, const CallArgs& op) {
  const size_t es = typeSize(op.type);
  exchangeBlocks(
      io, op, [&](int p) { return BlockAt{op.sendDispls[p] * es, op.sendCounts[p] * es}; },
      [&](int p) { return BlockAt{op.recvDispls[p] * es, op.recvCounts[p] * es}; });
}

}  // namespace chorus
