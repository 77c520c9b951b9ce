// Pure schedule math for the double binary tree (NCCL's): two binary trees over the same ranks, each carrying half
// of the data, built so that every rank is interior in at most one of them (its links then carry one tree's
// children, not two). No I/O; unit-tested on its own.
//
// Both trees are in-order binary trees over the positions 1..N (position v sits at the level of its lowest set
// bit; odd positions are leaves, even ones are interior). Tree 0 puts rank r at position r+1; tree 1 puts the ranks
// that are leaves in tree 0 on even positions: the mirror N-r for even N, the shift (r == 0 ? N : r) for odd N.
#pragma once

namespace chorus {

// One rank's links in one tree, as ranks (-1: none).
struct TreeNode {
  int parent = -1;
  int child[2] = {-1, -1};
  int numChildren = 0;
  int depth = 0;  // hops from the tree's root
};

// The largest power of two that is at most n (n >= 1).
inline int largestPowerOfTwoAtMost(int n) {
  int p = 1;
  while (p <= n / 2) p *= 2;
  return p;
}

// Parent of position v (1..n) in the in-order binary tree over 1..n; 0 for its top (the largest power of two <= n).
// Positions past n are left out of the infinite in-order tree; each one that is left out can only have a left
// subtree in range, so its place goes to its left child, and the parent is the first ancestor that is in range.
inline int inOrderParent(int v, int n) {
  if (v == largestPowerOfTwoAtMost(n)) return 0;
  int p = v;
  do {
    int bit = p & -p;
    p = (p & (bit << 1)) ? p - bit : p + bit;  // of p-bit and p+bit, the one one level up
  } while (p > n);
  return p;
}

// Children of position v in the in-order binary tree over 1..n (the same tree inOrderParent describes); returns
// how many (0..2) and writes them to out.
inline int inOrderChildren(int v, int n, int out[2]) {
  int half = (v & -v) / 2;
  if (half == 0) return 0;  // odd positions are leaves
  int k = 0;
  out[k++] = v - half;
  for (int h = half; h > 0; h /= 2) {
    if (v + h <= n) {
      out[k++] = v + h;
      break;
    }
  }
  return k;
}

// Hops from position v up to the top of the in-order binary tree over 1..n.
inline int inOrderDepth(int v, int n) {
  int d = 0;
  for (int p = inOrderParent(v, n); p != 0; p = inOrderParent(p, n)) ++d;
  return d;
}

// The two trees over ranks 0..size-1.
class DoubleBinaryTree {
 public:
  // Both trees over all ranks, each with its own root (allreduce: each tree reduces its half to its root and
  // broadcasts it back).
  static DoubleBinaryTree unrooted(int rank, int size) {
    DoubleBinaryTree t;
    for (int tree = 0; tree < 2; ++tree) {
      int v = position(tree, rank, size);
      TreeNode& node = t.node_[tree];
      int p = inOrderParent(v, size);
      node.parent = p == 0 ? -1 : rankAt(tree, p, size);
      int kids[2];
      node.numChildren = inOrderChildren(v, size, kids);
      for (int i = 0; i < node.numChildren; ++i) node.child[i] = rankAt(tree, kids[i], size);
      node.depth = inOrderDepth(v, size);
    }
    return t;
  }

  // Both trees rooted at `root` (broadcast, reduce): the other size-1 ranks form an unrooted double tree, relabelled
  // so that the rank after root comes first, and root sits on top of both trees with one child in each.
  static DoubleBinaryTree rootedAt(int rank, int size, int root) {
    DoubleBinaryTree t;
    const int others = size - 1;
    auto toRank = [&](int i) { return i < 0 ? -1 : (i + 1 + root) % size; };
    const int rel = ((rank - root) % size + size) % size;
    if (rel == 0) {
      for (int tree = 0; tree < 2; ++tree) {
        if (others == 0) continue;
        t.node_[tree].child[0] = toRank(rankAt(tree, largestPowerOfTwoAtMost(others), others));
        t.node_[tree].numChildren = 1;
      }
      return t;
    }
    DoubleBinaryTree inner = unrooted(rel - 1, others);
    for (int tree = 0; tree < 2; ++tree) {
      const TreeNode& in = inner.node_[tree];
      TreeNode& node = t.node_[tree];
      node.parent = in.parent < 0 ? root : toRank(in.parent);
      node.numChildren = in.numChildren;
      for (int i = 0; i < in.numChildren; ++i) node.child[i] = toRank(in.child[i]);
      node.depth = in.depth + 1;
    }
    return t;
  }

  // This rank's links in tree 0 or 1.
  const TreeNode& tree(int t) const { return node_[t]; }

  // Position of `rank` in tree t (1..size), and the rank at position v: the labelling described at the top.
  static int position(int tree, int rank, int size) {
    if (tree == 0) return rank + 1;
    if (size % 2 == 0) return size - rank;
    return rank == 0 ? size : rank;
  }
  static int rankAt(int tree, int v, int size) {
    if (tree == 0) return v - 1;
    if (size % 2 == 0) return size - v;
    return v == size ? 0 : v;
  }

 private:
  TreeNode node_[2];
};

}  // namespace chorus
