// Gather and scatter, each two ways: direct (the root posts one receive or send per rank, all at once: the fewest
// bytes moved, for large blocks) and binomial (log2 p steps along a binomial tree rooted at the root: the fewest
// messages at the root, for small blocks).
//
// In the binomial tree ranks are numbered relative to the root (v = r - root mod p). Gathering, at step k = 1, 2,
// 4, ... a rank with bit k of v set sends everything it holds (the blocks of v .. v+k-1, fewer at the end) to v-k
// and is done; the others receive v+k's blocks after their own. Scatter runs the same tree backwards. Blocks travel
// in relative order in a staging buffer; the root unrotates them into rank order.
#include <algorithm>

#include "algorithms/algorithms.h"
#include "core/datatype.h"

namespace chorus {
namespace {

// The blocks a subtree at relative rank v covers after the steps below k: v .. min(v + k, p) - 1.
size_t subtreeBlocks(int v, int k, int p) { return static_cast<size_t>(std::min(v + k, p) - v); }

// The root's blocks in rank order <-> relative order (relative block i is rank (i + root) mod p): two runs.
void rotate(PeerIO& io, char* dst, const char* src, size_t block, int p, int root, bool toRelative) {
  const size_t tail = static_cast<size_t>(p - root) * block;  // ranks root..p-1 are relative 0..p-root-1
  const size_t rootOffset = static_cast<size_t>(root) * block;
  if (toRelative) {
    io.copy(dst, src + rootOffset, tail);
    io.copy(dst + tail, src, rootOffset);
  } else {
    io.copy(dst + rootOffset, src, tail);
    io.copy(dst, src + tail, rootOffset);
  }
}

}  // namespace

void directGather(PeerIO& io, const CallArgs& op) {
  const int p = io.size(), r = io.rank();
  const size_t block = op.count * typeSize(op.type);
  io.postingTogether();
  if (r != op.root) {
    io.wait(io.isend(op.root, op.send, block));
    return;
  }
  char* recv = static_cast<char*>(op.recv);
  for (int s = 1; s < p; ++s) {
    const int from = (r + s) % p;
    io.irecv(from, recv + static_cast<size_t>(from) * block, block);
  }
  copyIfOutOfPlace(io, op.send, recv + static_cast<size_t>(r) * block, block);
  io.waitAll();
}

void directScatter(PeerIO& io, const CallArgs& op) {
  const int p = io.size(), r = io.rank();
  const size_t block = op.count * typeSize(op.type);
  io.postingTogether();
  if (r != op.root) {
    io.wait(io.irecv(op.root, op.recv, block));
    return;
  }
  const char* send = static_cast<const char*>(op.send);
  for (int s = 1; s < p; ++s) {
    const int to = (r + s) % p;
    io.isend(to, send + static_cast<size_t>(to) * block, block);
  }
  copyIfOutOfPlace(io, send + static_cast<size_t>(r) * block, op.recv, block);
  io.waitAll();
}

void binomialGather(PeerIO& io, const CallArgs& op) {
  const int p = io.size(), r = io.rank();
  const size_t block = op.count * typeSize(op.type);
  const int v = (r - op.root + p) % p;
  if (p == 1 || block == 0) {
    directGather(io, op);  // nothing to stage; every rank still meets the root, so counts are still compared
    return;
  }
  // The blocks this rank will hold, in relative order from its own: the root's are the whole result.
  char* held = io.workspace(subtreeBlocks(v, p, p) * block);
  io.copy(held, op.send, block);
  for (int k = 1; k < p; k <<= 1) {
    if (v & k) {
      io.wait(io.isend((r - k + p) % p, held, subtreeBlocks(v, k, p) * block));
      return;
    }
    if (v + k < p) {
      io.wait(io.irecv((r + k) % p, held + static_cast<size_t>(k) * block, subtreeBlocks(v + k, k, p) * block));
    }
  }
  rotate(io, static_cast<char*>(op.recv), held, block, p, op.root, false);
}

void binomialScatter(PeerIO& io, const CallArgs& op) {
  const int p = io.size(), r = io.rank();
  const size_t block = op.count * typeSize(op.type);
  const int v = (r - op.root + p) % p;
  if (p == 1 || block == 0) {
    directScatter(io, op);
    return;
  }
  // The highest step at which this rank receives (its lowest set bit), or the top for the root.
  int top = 1;
  while (top < p) top <<= 1;
  int k = v == 0 ? top : (v & -v);
  char* held = io.workspace(subtreeBlocks(v, k, p) * block);
  if (v == 0) {
    rotate(io, held, static_cast<const char*>(op.send), block, p, op.root, true);
  } else {
    io.wait(io.irecv((r - k + p) % p, held, subtreeBlocks(v, k, p) * block));
  }
  for (k >>= 1; k >= 1; k >>= 1) {
    if (v + k < p) {
      io.wait(io.isend((r + k) % p, held + static_cast<size_t>(k) * block, subtreeBlocks(v + k, k, p) * block));
    }
  }
  io.copy(op.recv, held, block);
}

}  // namespace chorus
