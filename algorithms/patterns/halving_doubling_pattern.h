// Pure schedule math for halving-doubling (Rabenseifner; Thakur, Rabenseifner and Gropp 2005): recursive halving,
// recursive doubling, binomial scatter and gather over a power-of-two group, with the usual fix-up for the ranks
// beyond it. No I/O; unit-tested on its own.
//
// With n = p + e ranks (p the largest power of two <= n), the first 2e ranks pair up: each even one folds its data
// into the odd one after it and sits out; the odd one stands for both. The p ranks left are the virtual ranks
// 0..p-1 (vranks), in rank order. The data is cut into p virtual blocks (vblocks), vblock v belonging to vrank v,
// so that recursive halving from the farthest partner down leaves vrank v with vblock v, in natural order.
#pragma once

#include <cstddef>

#include "algorithms/patterns/double_binary_tree_pattern.h"
#include "algorithms/patterns/ring_pattern.h"

namespace chorus {

// A run of consecutive vblocks.
struct BlockRange {
  int first = 0;
  int count = 0;
};

struct HalvingDoublingPattern {
  int rank;
  int size;

  int pow2() const { return largestPowerOfTwoAtMost(size); }
  int extra() const { return size - pow2(); }
  // Number of halving (and of doubling) steps: log2(pow2()).
  int steps() const {
    int s = 0;
    for (int p = pow2(); p > 1; p /= 2) ++s;
    return s;
  }

  // Fix-up roles: a folding rank hands its data to foldPartner() and takes no part in the steps; an absorbing rank
  // takes that data in and stands for both; every other rank is a plain member.
  bool folds() const { return rank < 2 * extra() && rank % 2 == 0; }
  bool absorbs() const { return rank < 2 * extra() && rank % 2 == 1; }
  int foldPartner() const { return folds() ? rank + 1 : rank - 1; }

  // This rank's vrank, -1 when it folds; and the rank standing for vrank v.
  int vrank() const {
    if (folds()) return -1;
    return rank < 2 * extra() ? rank / 2 : rank - extra();
  }
  int rankOf(int v) const { return v < extra() ? 2 * v + 1 : v + extra(); }
  // The first rank vrank v stands for (v == pow2() gives size): ranks [firstRankOf(v), firstRankOf(v+1)) are v's.
  int firstRankOf(int v) const { return v < extra() ? 2 * v : v + extra(); }

  // The aligned run of `width` vblocks (a power of two) that contains vblock v.
  static BlockRange alignedGroup(int v, int width) { return BlockRange{v & ~(width - 1), width}; }

  // Recursive halving step i (0..steps()-1): the partner at distance pow2() >> (i+1); the vblocks this rank sends
  // (the partner's half) and keeps (its own half, which the partner sends and this rank reduces).
  int halvingDistance(int i) const { return pow2() >> (i + 1); }
  int halvingPartner(int i) const { return rankOf(vrank() ^ halvingDistance(i)); }
  BlockRange halvingSent(int i) const { return alignedGroup(vrank() ^ halvingDistance(i), halvingDistance(i)); }
  BlockRange halvingKept(int i) const { return alignedGroup(vrank(), halvingDistance(i)); }

  // Recursive doubling step i (0..steps()-1): the partner at distance 1 << i; the vblocks this rank owns and sends,
  // and the ones it receives (the partner's).
  int doublingDistance(int i) const { return 1 << i; }
  int doublingPartner(int i) const { return rankOf(vrank() ^ doublingDistance(i)); }
  BlockRange doublingSent(int i) const { return alignedGroup(vrank(), doublingDistance(i)); }
  BlockRange doublingReceived(int i) const { return alignedGroup(vrank() ^ doublingDistance(i), doublingDistance(i)); }

  // Binomial gather to vrank vroot, step i (0..steps()-1, distance 1 << i), over vranks relative to vroot (by XOR,
  // which keeps every aligned run aligned): the sender hands over the run it has gathered and is done.
  bool gatherSends(int i, int vroot) const { return ((vrank() ^ vroot) & ((2 << i) - 1)) == (1 << i); }
  bool gatherReceives(int i, int vroot) const { return ((vrank() ^ vroot) & ((2 << i) - 1)) == 0; }
  int gatherPartner(int i) const { return rankOf(vrank() ^ (1 << i)); }
  // What the sender at step i sends (its own run) and what the receiver receives (its partner's run).
  BlockRange gatherSent(int i) const { return alignedGroup(vrank(), 1 << i); }
  BlockRange gatherReceived(int i) const { return alignedGroup(vrank() ^ (1 << i), 1 << i); }

  // Binomial scatter from vrank vroot, step i (0..steps()-1, distance pow2() >> (i+1)): a holder sends the run of
  // vblocks that contains its partner; the receiver gets the run that contains itself.
  int scatterDistance(int i) const { return pow2() >> (i + 1); }
  bool scatterSends(int i, int vroot) const {
    int d = scatterDistance(i);
    return ((vrank() ^ vroot) & (2 * d - 1)) == 0;
  }
  bool scatterReceives(int i, int vroot) const {
    int d = scatterDistance(i);
    return ((vrank() ^ vroot) & (2 * d - 1)) == d;
  }
  int scatterPartner(int i) const { return rankOf(vrank() ^ scatterDistance(i)); }
  BlockRange scatterSent(int i) const { return alignedGroup(vrank() ^ scatterDistance(i), scatterDistance(i)); }
  BlockRange scatterReceived(int i) const { return alignedGroup(vrank(), scatterDistance(i)); }
};

// Rooted collectives relabel ranks so that the root is the last one (which never folds). With a power-of-two
// count, label = rank ^ root ^ (n - 1): aligned runs of ranks stay aligned runs, so ranks of one host (in blocks of
// a power of two) still pair up inside it at the near steps. (A rotation split them: at 2 hosts x 2 ranks every
// step of a broadcast from rank 0 crossed hosts, 1.3x slower in the lab.) Otherwise label = rank - root - 1.
struct RootLastLabels {
  int root, n;
  bool pow2() const { return (n & (n - 1)) == 0; }
  int labelOf(int rank) const { return pow2() ? rank ^ root ^ (n - 1) : (rank - root - 1 + n) % n; }
  int rankOf(int label) const { return pow2() ? label ^ root ^ (n - 1) : (label + root + 1) % n; }
};

// Where the vblocks lie in a buffer, in elements.
class BlockLayout {
 public:
  // `count` elements cut into p.pow2() balanced vblocks (allreduce, reduce, broadcast).
  static BlockLayout balanced(size_t count, const HalvingDoublingPattern& p) { return BlockLayout(p, count, 0); }
  // Vblock v holds the blocks of the ranks v stands for, blockElems each, in rank order (reduce-scatter,
  // allgather: rank r's block then lies where the caller's buffer has it).
  static BlockLayout perRank(size_t blockElems, const HalvingDoublingPattern& p) {
    return BlockLayout(p, 0, blockElems);
  }
  // The elements of the vblocks in b (contiguous, since vblocks lie in order).
  Range elements(BlockRange b) const {
    size_t begin = start(b.first), end = start(b.first + b.count);
    return Range{begin, end - begin};
  }

 private:
  BlockLayout(const HalvingDoublingPattern& p, size_t count, size_t blockElems)
      : pattern_(p), count_(count), blockElems_(blockElems) {}
  size_t start(int v) const {
    if (blockElems_ > 0) return static_cast<size_t>(pattern_.firstRankOf(v)) * blockElems_;
    const int pow2 = pattern_.pow2();
    return v >= pow2 ? count_ : splitEven(count_, static_cast<size_t>(pow2), static_cast<size_t>(v)).begin;
  }

  HalvingDoublingPattern pattern_;
  size_t count_;       // balanced layouts
  size_t blockElems_;  // per-rank layouts (0: balanced)
};

}  // namespace chorus
