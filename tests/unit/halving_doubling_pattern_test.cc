#include "algorithms/patterns/halving_doubling_pattern.h"

#include <gtest/gtest.h>

#include <vector>

namespace chorus {
namespace {

constexpr int kMaxHdSize = 64;

bool contains(BlockRange outer, BlockRange inner) {
  return inner.first >= outer.first && inner.first + inner.count <= outer.first + outer.count;
}

bool equal(BlockRange a, BlockRange b) { return a.first == b.first && a.count == b.count; }

TEST(HalvingDoublingPattern, FixUpPairsTheExtraRanksAndNumbersTheRest) {
  for (int n = 1; n <= kMaxHdSize; ++n) {
    HalvingDoublingPattern any{0, n};
    const int p2 = any.pow2();
    EXPECT_EQ(p2 & (p2 - 1), 0);
    EXPECT_LE(p2, n);
    EXPECT_GT(2 * p2, n);
    EXPECT_EQ(1 << any.steps(), p2);
    std::vector<int> standsFor(p2, 0);
    int folding = 0;
    for (int r = 0; r < n; ++r) {
      HalvingDoublingPattern p{r, n};
      EXPECT_FALSE(p.folds() && p.absorbs());
      if (p.folds()) {
        ++folding;
        EXPECT_EQ(p.vrank(), -1);
        HalvingDoublingPattern partner{p.foldPartner(), n};
        EXPECT_TRUE(partner.absorbs());
        EXPECT_EQ(partner.foldPartner(), r);
        continue;
      }
      ASSERT_GE(p.vrank(), 0);
      ASSERT_LT(p.vrank(), p2);
      ++standsFor[p.vrank()];
      EXPECT_EQ(p.rankOf(p.vrank()), r);
      // The ranks a vrank stands for: itself, and its folding partner when it absorbs.
      EXPECT_EQ(p.firstRankOf(p.vrank()), p.absorbs() ? r - 1 : r);
      EXPECT_EQ(p.firstRankOf(p.vrank() + 1), r + 1);
    }
    EXPECT_EQ(folding, n - p2);
    for (int v = 0; v < p2; ++v) EXPECT_EQ(standsFor[v], 1) << "vrank " << v << " of " << n;
    EXPECT_EQ(any.firstRankOf(0), 0);
    EXPECT_EQ(any.firstRankOf(p2), n);
    // The last rank never folds (the rooted collectives relabel their root there).
    EXPECT_FALSE((HalvingDoublingPattern{n - 1, n}.folds()));
  }
}

TEST(HalvingDoublingPattern, HalvingLeavesEachVrankItsOwnBlockAndPartnersAgree) {
  for (int n = 2; n <= kMaxHdSize; ++n) {
    const int p2 = HalvingDoublingPattern{0, n}.pow2();
    std::vector<int> finalOwner(p2, 0);
    for (int r = 0; r < n; ++r) {
      HalvingDoublingPattern p{r, n};
      if (p.folds()) continue;
      BlockRange held{0, p2};
      for (int i = 0; i < p.steps(); ++i) {
        BlockRange kept = p.halvingKept(i), sent = p.halvingSent(i);
        // What this rank held splits into what it keeps and what it sends, halves of it.
        EXPECT_TRUE(contains(held, kept));
        EXPECT_TRUE(contains(held, sent));
        EXPECT_EQ(kept.count, held.count / 2);
        EXPECT_EQ(sent.count, held.count / 2);
        EXPECT_NE(kept.first, sent.first);
        // The partner sends exactly what this rank keeps, and keeps what this rank sends.
        HalvingDoublingPattern partner{p.halvingPartner(i), n};
        ASSERT_FALSE(partner.folds());
        EXPECT_EQ(partner.halvingPartner(i), r);
        EXPECT_TRUE(equal(partner.halvingSent(i), kept));
        EXPECT_TRUE(equal(partner.halvingKept(i), sent));
        held = kept;
      }
      EXPECT_TRUE(equal(held, (BlockRange{p.vrank(), 1})));
      ++finalOwner[held.first];
    }
    for (int v = 0; v < p2; ++v) EXPECT_EQ(finalOwner[v], 1) << "each vblock reduced by exactly one vrank";
  }
}

TEST(HalvingDoublingPattern, DoublingGathersEveryBlockOnce) {
  for (int n = 2; n <= kMaxHdSize; ++n) {
    const int p2 = HalvingDoublingPattern{0, n}.pow2();
    for (int r = 0; r < n; ++r) {
      HalvingDoublingPattern p{r, n};
      if (p.folds()) continue;
      std::vector<int> have(p2, 0);
      have[p.vrank()] = 1;
      for (int i = 0; i < p.steps(); ++i) {
        BlockRange sent = p.doublingSent(i), got = p.doublingReceived(i);
        for (int b = sent.first; b < sent.first + sent.count; ++b) EXPECT_EQ(have[b], 1) << "sends only what it has";
        HalvingDoublingPattern partner{p.doublingPartner(i), n};
        EXPECT_TRUE(equal(partner.doublingSent(i), got));
        EXPECT_TRUE(equal(partner.doublingReceived(i), sent));
        for (int b = got.first; b < got.first + got.count; ++b) ++have[b];
      }
      for (int v = 0; v < p2; ++v) EXPECT_EQ(have[v], 1) << "vblock " << v << " at rank " << r << " of " << n;
    }
  }
}

TEST(HalvingDoublingPattern, BinomialGatherBringsEveryBlockToTheRoot) {
  for (int n = 2; n <= kMaxHdSize; ++n) {
    const int p2 = HalvingDoublingPattern{0, n}.pow2();
    for (int vroot : {0, p2 - 1, p2 / 2}) {
      // have[v][b]: vrank v holds vblock b's reduction; each vrank starts with its own.
      std::vector<std::vector<int>> have(p2, std::vector<int>(p2, 0));
      std::vector<bool> done(p2, false);
      for (int v = 0; v < p2; ++v) have[v][v] = 1;
      const int steps = HalvingDoublingPattern{0, n}.steps();
      for (int i = 0; i < steps; ++i) {
        for (int v = 0; v < p2; ++v) {
          HalvingDoublingPattern p{HalvingDoublingPattern{0, n}.rankOf(v), n};
          EXPECT_FALSE(p.gatherSends(i, vroot) && p.gatherReceives(i, vroot));
          if (!p.gatherSends(i, vroot)) continue;
          EXPECT_FALSE(done[v]) << "sends once";
          done[v] = true;
          HalvingDoublingPattern to{p.gatherPartner(i), n};
          EXPECT_TRUE(to.gatherReceives(i, vroot));
          EXPECT_EQ(to.gatherPartner(i), p.rankOf(v));
          BlockRange sent = p.gatherSent(i);
          EXPECT_TRUE(equal(to.gatherReceived(i), sent));
          for (int b = sent.first; b < sent.first + sent.count; ++b) {
            EXPECT_EQ(have[v][b], 1) << "sends only what it gathered";
            EXPECT_EQ(have[to.vrank()][b], 0) << "receives nothing twice";
            have[to.vrank()][b] = 1;
          }
        }
      }
      for (int b = 0; b < p2; ++b) EXPECT_EQ(have[vroot][b], 1) << "vblock " << b << " at the root of " << n;
      for (int v = 0; v < p2; ++v) EXPECT_EQ(done[v], v != vroot);
    }
  }
}

TEST(HalvingDoublingPattern, BinomialScatterGivesEveryVrankItsBlock) {
  for (int n = 2; n <= kMaxHdSize; ++n) {
    HalvingDoublingPattern any{0, n};
    const int p2 = any.pow2();
    for (int vroot : {0, p2 - 1, p2 / 2}) {
      std::vector<std::vector<int>> have(p2, std::vector<int>(p2, 0));
      for (int b = 0; b < p2; ++b) have[vroot][b] = 1;
      std::vector<int> received(p2, 0);
      for (int i = 0; i < any.steps(); ++i) {
        for (int v = 0; v < p2; ++v) {
          HalvingDoublingPattern p{any.rankOf(v), n};
          if (!p.scatterSends(i, vroot)) continue;
          EXPECT_FALSE(p.scatterReceives(i, vroot));
          HalvingDoublingPattern to{p.scatterPartner(i), n};
          EXPECT_TRUE(to.scatterReceives(i, vroot));
          BlockRange sent = p.scatterSent(i);
          EXPECT_TRUE(equal(to.scatterReceived(i), sent));
          ++received[to.vrank()];
          for (int b = sent.first; b < sent.first + sent.count; ++b) {
            EXPECT_EQ(have[v][b], 1) << "a holder sends only what it holds";
            have[to.vrank()][b] = 1;
          }
        }
      }
      for (int v = 0; v < p2; ++v) {
        EXPECT_EQ(have[v][v], 1) << "vrank " << v << " of " << n;
        EXPECT_EQ(received[v], v == vroot ? 0 : 1);
      }
    }
  }
}

TEST(HalvingDoublingPattern, LayoutsCoverTheBufferInOrder) {
  for (int n = 1; n <= kMaxHdSize; ++n) {
    HalvingDoublingPattern p{0, n};
    for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{1031}}) {
      BlockLayout balanced = BlockLayout::balanced(count, p);
      BlockLayout perRank = BlockLayout::perRank(count == 0 ? 1 : count, p);
      size_t nextBalanced = 0, nextPerRank = 0;
      for (int v = 0; v < p.pow2(); ++v) {
        Range b = balanced.elements(BlockRange{v, 1});
        EXPECT_EQ(b.begin, nextBalanced);
        nextBalanced += b.len;
        Range r = perRank.elements(BlockRange{v, 1});
        EXPECT_EQ(r.begin, nextPerRank);
        nextPerRank += r.len;
      }
      EXPECT_EQ(nextBalanced, count);
      EXPECT_EQ(nextPerRank, (count == 0 ? 1 : count) * n);
      Range all = balanced.elements(BlockRange{0, p.pow2()});
      EXPECT_EQ(all.len, count);
    }
  }
}

}  // namespace
}  // namespace chorus

namespace chorus {
namespace {

TEST(RootLastLabelsTest, RootIsLastAndLabelsRoundTrip) {
  for (int n = 1; n <= 9; ++n) {
    for (int root = 0; root < n; ++root) {
      RootLastLabels l{root, n};
      EXPECT_EQ(l.labelOf(root), n - 1);
      for (int r = 0; r < n; ++r) EXPECT_EQ(l.rankOf(l.labelOf(r)), r);
    }
  }
}

TEST(RootLastLabelsTest, PowerOfTwoCountsKeepAlignedBlocksTogether) {
  // 8 ranks as 4 hosts x 2 or 2 hosts x 4: whatever the root, ranks of one block get labels of one block.
  for (int root = 0; root < 8; ++root) {
    RootLastLabels l{root, 8};
    for (int block : {2, 4}) {
      for (int r = 0; r < 8; ++r) EXPECT_EQ(l.labelOf(r) / block, l.labelOf(r - r % block) / block) << root;
    }
  }
}

}  // namespace
}  // namespace chorus
