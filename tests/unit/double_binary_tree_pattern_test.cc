#include "algorithms/patterns/double_binary_tree_pattern.h"

#include <gtest/gtest.h>

#include <vector>

namespace chorus {
namespace {

constexpr int kMaxTreeSize = 64;

// Every rank's node in both trees of one world.
using World = std::vector<DoubleBinaryTree>;

World unrootedWorld(int n) {
  World w;
  for (int r = 0; r < n; ++r) w.push_back(DoubleBinaryTree::unrooted(r, n));
  return w;
}

World rootedWorld(int n, int root) {
  World w;
  for (int r = 0; r < n; ++r) w.push_back(DoubleBinaryTree::rootedAt(r, n, root));
  return w;
}

// Checks that tree t of the world is one tree over all ranks: a single root, parent and child links that agree,
// depths one more than the parent's, every rank reached once from the root, and depth within log2(n) + slack.
void expectOneTree(const World& w, int t, int wantRoot, int maxDepth) {
  const int n = static_cast<int>(w.size());
  int root = -1;
  for (int r = 0; r < n; ++r) {
    const TreeNode& node = w[r].tree(t);
    ASSERT_LE(node.numChildren, 2);
    if (node.parent < 0) {
      EXPECT_EQ(root, -1) << "two roots in tree " << t << " of " << n;
      root = r;
      EXPECT_EQ(node.depth, 0);
      continue;
    }
    ASSERT_GE(node.parent, 0);
    ASSERT_LT(node.parent, n);
    const TreeNode& parent = w[node.parent].tree(t);
    int seen = 0;
    for (int c = 0; c < parent.numChildren; ++c) seen += parent.child[c] == r ? 1 : 0;
    EXPECT_EQ(seen, 1) << "rank " << r << " is not a child of its parent " << node.parent << " (n " << n << ")";
    EXPECT_EQ(node.depth, parent.depth + 1);
    EXPECT_LE(node.depth, maxDepth) << "n " << n;
  }
  ASSERT_GE(root, 0) << "no root in tree " << t << " of " << n;
  if (wantRoot >= 0) {
    EXPECT_EQ(root, wantRoot);
  }
  std::vector<int> reached(n, 0);
  std::vector<int> stack = {root};
  while (!stack.empty()) {
    int r = stack.back();
    stack.pop_back();
    ++reached[r];
    const TreeNode& node = w[r].tree(t);
    for (int c = 0; c < node.numChildren; ++c) {
      ASSERT_NE(node.child[c], r);
      EXPECT_EQ(w[node.child[c]].tree(t).parent, r);
      stack.push_back(node.child[c]);
    }
  }
  for (int r = 0; r < n; ++r) EXPECT_EQ(reached[r], 1) << "rank " << r << " in tree " << t << " of " << n;
}

int ceilLog2(int n) {
  int d = 0;
  while ((1 << d) < n) ++d;
  return d;
}

TEST(DoubleBinaryTreePattern, InOrderTreeLinksAgree) {
  for (int n = 1; n <= kMaxTreeSize; ++n) {
    int tops = 0;
    for (int v = 1; v <= n; ++v) {
      int p = inOrderParent(v, n);
      if (p == 0) {
        ++tops;
        EXPECT_EQ(v, largestPowerOfTwoAtMost(n));
        continue;
      }
      int kids[2];
      int k = inOrderChildren(p, n, kids);
      EXPECT_TRUE((k > 0 && kids[0] == v) || (k > 1 && kids[1] == v)) << v << " under " << p << " of " << n;
    }
    EXPECT_EQ(tops, 1);
    for (int v = 1; v <= n; ++v) {
      int kids[2];
      int k = inOrderChildren(v, n, kids);
      if (v % 2 == 1) {
        EXPECT_EQ(k, 0) << "odd positions are leaves";
      } else {
        EXPECT_GE(k, 1) << "even positions are interior";
      }
      for (int i = 0; i < k; ++i) EXPECT_EQ(inOrderParent(kids[i], n), v);
    }
  }
}

TEST(DoubleBinaryTreePattern, UnrootedTreesSpanEveryRankWithLogDepth) {
  for (int n = 1; n <= kMaxTreeSize; ++n) {
    World w = unrootedWorld(n);
    for (int t = 0; t < 2; ++t) expectOneTree(w, t, -1, ceilLog2(n));
  }
}

TEST(DoubleBinaryTreePattern, UnrootedEveryRankIsInteriorInAtMostOneTree) {
  for (int n = 1; n <= kMaxTreeSize; ++n) {
    for (int r = 0; r < n; ++r) {
      DoubleBinaryTree d = DoubleBinaryTree::unrooted(r, n);
      int interior = (d.tree(0).numChildren > 0 ? 1 : 0) + (d.tree(1).numChildren > 0 ? 1 : 0);
      EXPECT_LE(interior, 1) << "rank " << r << " of " << n;
      EXPECT_LE(d.tree(0).numChildren + d.tree(1).numChildren, 2);
    }
  }
}

TEST(DoubleBinaryTreePattern, UnrootedTreesHaveDifferentRootsBeyondOneRank) {
  for (int n = 2; n <= kMaxTreeSize; ++n) {
    World w = unrootedWorld(n);
    int roots[2] = {-1, -1};
    for (int r = 0; r < n; ++r) {
      for (int t = 0; t < 2; ++t) {
        if (w[r].tree(t).parent < 0) roots[t] = r;
      }
    }
    EXPECT_NE(roots[0], roots[1]) << "n " << n;
  }
}

TEST(DoubleBinaryTreePattern, PositionsAreABijection) {
  for (int n = 1; n <= kMaxTreeSize; ++n) {
    for (int t = 0; t < 2; ++t) {
      std::vector<int> used(n + 1, 0);
      for (int r = 0; r < n; ++r) {
        int v = DoubleBinaryTree::position(t, r, n);
        ASSERT_GE(v, 1);
        ASSERT_LE(v, n);
        ++used[v];
        EXPECT_EQ(DoubleBinaryTree::rankAt(t, v, n), r);
      }
      for (int v = 1; v <= n; ++v) EXPECT_EQ(used[v], 1);
    }
  }
}

TEST(DoubleBinaryTreePattern, RootedTreesShareTheRootAndSpanEveryRank) {
  for (int n = 1; n <= kMaxTreeSize; ++n) {
    for (int root : {0, n / 2, n - 1}) {
      World w = rootedWorld(n, root);
      for (int t = 0; t < 2; ++t) {
        expectOneTree(w, t, root, n == 1 ? 0 : ceilLog2(n - 1) + 1);
        EXPECT_EQ(w[root].tree(t).numChildren, n > 1 ? 1 : 0) << "the root feeds each tree once";
      }
      for (int r = 0; r < n; ++r) {
        if (r == root) continue;
        int interior = (w[r].tree(0).numChildren > 0 ? 1 : 0) + (w[r].tree(1).numChildren > 0 ? 1 : 0);
        EXPECT_LE(interior, 1) << "rank " << r << " of " << n << " rooted at " << root;
      }
    }
  }
}

TEST(DoubleBinaryTreePattern, SmallWorldsByHand) {
  // Four ranks: tree 0 is positions 1..4 = ranks 0..3 with top 4 (rank 3) and 2 (rank 1) under it; tree 1 mirrors.
  DoubleBinaryTree r1 = DoubleBinaryTree::unrooted(1, 4);
  EXPECT_EQ(r1.tree(0).parent, 3);
  EXPECT_EQ(r1.tree(0).numChildren, 2);
  EXPECT_EQ(r1.tree(0).child[0], 0);
  EXPECT_EQ(r1.tree(0).child[1], 2);
  EXPECT_EQ(r1.tree(1).numChildren, 0);
  EXPECT_EQ(DoubleBinaryTree::unrooted(0, 4).tree(1).parent, -1);
  // Two ranks rooted at 1: rank 0 is the only child in both trees.
  DoubleBinaryTree root = DoubleBinaryTree::rootedAt(1, 2, 1);
  EXPECT_EQ(root.tree(0).child[0], 0);
  EXPECT_EQ(root.tree(1).child[0], 0);
  EXPECT_EQ(DoubleBinaryTree::rootedAt(0, 2, 1).tree(1).parent, 1);
}

}  // namespace
}  // namespace chorus
