// RingQueue: first in, first out across growth and wrap-around.
#include "core/ring_queue.h"

#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <string>

namespace chorus {
namespace {

TEST(RingQueueTest, KeepsOrderAcrossWrapAroundAndGrowth) {
  RingQueue<int> q;
  std::deque<int> reference;
  int next = 0;
  // Depths rise and fall so that the queue wraps at every capacity it grows through.
  for (int round = 0; round < 200; ++round) {
    const int pushes = (round * 7) % 23, pops = (round * 5) % 19;
    for (int i = 0; i < pushes; ++i) {
      q.push_back(next);
      reference.push_back(next++);
    }
    for (int i = 0; i < pops && !reference.empty(); ++i) {
      ASSERT_EQ(q.front(), reference.front());
      q.pop_front();
      reference.pop_front();
    }
    ASSERT_EQ(q.size(), reference.size());
    ASSERT_EQ(q.empty(), reference.empty());
    for (size_t i = 0; i < reference.size(); ++i) ASSERT_EQ(q[i], reference[i]);
  }
}

TEST(RingQueueTest, PopAndClearReleaseWhatElementsHold) {
  auto held = std::make_shared<std::string>("payload");
  RingQueue<std::shared_ptr<std::string>> q;
  q.push_back(held);
  q.push_back(held);
  EXPECT_EQ(held.use_count(), 3);
  q.pop_front();
  EXPECT_EQ(held.use_count(), 2);
  q.clear();
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(held.use_count(), 1);
  q.push_back(held);
  EXPECT_EQ(*q.front(), "payload");
}

}  // namespace
}  // namespace chorus
