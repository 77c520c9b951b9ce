#include "algorithms/patterns/ring_pattern.h"

#include <gtest/gtest.h>

#include <set>

namespace chorus {

TEST(RingPattern, SplitEvenCoversEverythingOnce) {
  for (size_t count : {0, 1, 7, 64, 1001}) {
    for (size_t parts : {1, 2, 3, 8, 13}) {
      size_t next = 0;
      for (size_t i = 0; i < parts; ++i) {
        Range r = splitEven(count, parts, i);
        EXPECT_EQ(r.begin, next);
        EXPECT_LE(r.len, count / parts + 1);
        next = r.begin + r.len;
      }
      EXPECT_EQ(next, count);
    }
  }
}

TEST(RingPattern, SlicesFitTheLargestPiece) {
  EXPECT_EQ(slicesFor(0, 4, 10), 1u);
  EXPECT_EQ(slicesFor(40, 4, 10), 1u);
  EXPECT_EQ(slicesFor(41, 4, 10), 2u);
  EXPECT_EQ(slicesFor(1000, 1, 128), 8u);
}

TEST(RingPattern, AllreduceOwnsEveryChunkOnceAndGathersTheRest) {
  for (int n : {2, 3, 5, 8}) {
    for (int r = 0; r < n; ++r) {
      RingPattern p{r, n};
      std::set<int> reduced;
      for (int j = 0; j < n - 1; ++j) {
        // What this rank sends at step j is what it reduced at step j-1 (or its own chunk at step 0).
        EXPECT_EQ(p.allreduceSendChunk(j), j == 0 ? r : p.allreduceRecvChunk(j - 1));
        // And it is what the next rank expects to receive at step j.
        EXPECT_EQ(p.allreduceSendChunk(j), (RingPattern{p.next(), n}.allreduceRecvChunk(j)));
        reduced.insert(p.allreduceRecvChunk(j));
      }
      EXPECT_EQ(reduced.size(), static_cast<size_t>(n - 1));
      EXPECT_EQ(p.allreduceRecvChunk(n - 2), (r + 1) % n);  // the chunk this rank finishes
      std::set<int> gathered;
      for (int t = 0; t < n - 1; ++t) gathered.insert(p.allreduceGatherChunk(t));
      gathered.insert((r + 1) % n);
      EXPECT_EQ(gathered.size(), static_cast<size_t>(n));
    }
  }
}

TEST(RingPattern, ReduceScatterEndsWithOwnBlock) {
  for (int n : {2, 3, 4, 7}) {
    for (int r = 0; r < n; ++r) {
      RingPattern p{r, n};
      EXPECT_EQ(p.reduceScatterRecvChunk(n - 2), r);
      for (int j = 0; j + 1 < n - 1; ++j) EXPECT_EQ(p.reduceScatterSendChunk(j + 1), p.reduceScatterRecvChunk(j));
      EXPECT_EQ(p.reduceScatterSendChunk(0), (RingPattern{p.next(), n}.reduceScatterRecvChunk(0)));
    }
  }
}

TEST(RingPattern, ChainPositions) {
  RingPattern p{2, 5};
  EXPECT_EQ(p.broadcastPosition(2), 0);
  EXPECT_EQ(p.broadcastPosition(3), 4);
  EXPECT_EQ(p.reducePosition(3), 0);  // rank 2 is just before root 3: the reduce starts there
  EXPECT_EQ(p.reducePosition(2), 4);
  // The reduce chain runs the broadcast chain's links backwards (rank r hands on to r - 1): the same pairs of ranks,
  // so the same host boundaries, and the root last.
  for (int root = 0; root < 5; ++root) {
    for (int r = 0; r < 5; ++r) {
      RingPattern q{r, 5};
      EXPECT_EQ(q.reducePosition(root), r == root ? 4 : 4 - q.broadcastPosition(root));
      if (r != root) {
        EXPECT_EQ((RingPattern{q.prev(), 5}.reducePosition(root)), q.reducePosition(root) + 1);
      }
    }
  }
}

}  // namespace chorus
