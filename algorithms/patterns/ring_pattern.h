// Pure schedule math for ring and chain algorithms (no I/O), unit-tested on its own.
#pragma once

#include <cstddef>

namespace chorus {

// A contiguous run of elements.
struct Range {
  size_t begin = 0;
  size_t len = 0;
};

// `count` elements cut into `parts` balanced pieces (lengths differ by at most one); piece i.
inline Range splitEven(size_t count, size_t parts, size_t i) {
  size_t base = count / parts, extra = count % parts;
  return Range{i * base + (i < extra ? i : extra), base + (i < extra ? 1 : 0)};
}

// The number of slices of at most `sliceElems` elements that the largest of `parts` pieces needs (at least 1).
inline size_t slicesFor(size_t count, size_t parts, size_t sliceElems) {
  size_t largest = (count + parts - 1) / parts;
  size_t k = (largest + sliceElems - 1) / sliceElems;
  return k == 0 ? 1 : k;
}

inline int modRank(long long v, int n) { return static_cast<int>(((v % n) + n) % n); }

struct RingPattern {
  int rank;
  int size;
  int next() const { return modRank(rank + 1, size); }
  int prev() const { return modRank(rank - 1, size); }
  // Ring allreduce, reduce-scatter phase step j (0..n-2): chunk sent, and chunk received and reduced.
  // Rank r finishes the phase owning chunk r+1.
  int allreduceSendChunk(int j) const { return modRank(rank - j, size); }
  int allreduceRecvChunk(int j) const { return modRank(rank - j - 1, size); }
  // Ring allreduce, allgather phase step t (0..n-2): chunk received (and forwarded at t+1).
  int allreduceGatherChunk(int t) const { return modRank(rank - t, size); }
  // Ring reduce-scatter step j: shifted by one so that rank r finishes owning chunk r.
  int reduceScatterSendChunk(int j) const { return modRank(rank - j - 1, size); }
  int reduceScatterRecvChunk(int j) const { return modRank(rank - j - 2, size); }
  // Ring allgather step t: the block received (and forwarded at t+1); step 0 sends the own block.
  int allgatherRecvChunk(int t) const { return modRank(rank - t - 1, size); }
  // Chain rooted at `root`. A broadcast runs along the ring (rank + 1 next): position 0 is the root, the rank
  // before it is last. A reduce runs the same links the other way (rank - 1 next): position 0 is the rank before the
  // root, the root is last. Along the ring instead (root + 1 first, root last) a reduce crossed one more host boundary
  // whenever the root is its host's first rank (rank 0): with hosts in blocks of ranks, 3 -> 0 is a network hop.
  int broadcastPosition(int root) const { return modRank(rank - root, size); }
  int reducePosition(int root) const { return modRank(root - rank - 1, size); }
};

}  // namespace chorus
