// The order of host calls: numbers run one at a time in issue order, waiters are woken by the pass that frees
// their turn, and the order is idle exactly when every issued call has passed its turn on.
#include "src/comm/host_call_order.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace chorus {
namespace {

TEST(HostCallOrderTest, OneThreadNeverWaitsAndIsIdleAfterEachPass) {
  HostCallOrder order;
  std::atomic<bool> aborted{false};
  EXPECT_TRUE(order.idle());
  for (uint64_t i = 0; i < 1000; ++i) {
    const uint64_t n = order.issue();
    EXPECT_EQ(n, i);
    EXPECT_FALSE(order.idle());
    order.waitTurn(n, aborted);
    order.pass(n);
    EXPECT_TRUE(order.idle());
  }
}

// Threads take numbers and run in the order issued, whatever order they reach waitTurn in: each records the number
// it ran, and the record must be 0, 1, 2, ... (a pass that missed a waiter would leave it asleep until its bounded
// wait ran out: the test's time would show it, not its result).
TEST(HostCallOrderTest, CallsRunInIssueOrderAcrossThreads) {
  constexpr int kThreads = 8, kCallsEach = 200;
  HostCallOrder order;
  std::atomic<bool> aborted{false};
  std::vector<uint64_t> ran;
  ran.reserve(kThreads * kCallsEach);
  std::atomic<int> inside{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int c = 0; c < kCallsEach; ++c) {
        const uint64_t n = order.issue();
        order.waitTurn(n, aborted);
        EXPECT_EQ(inside.fetch_add(1), 0) << "two calls ran at once";
        ran.push_back(n);
        inside.fetch_sub(1);
        order.pass(n);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  ASSERT_EQ(ran.size(), static_cast<size_t>(kThreads * kCallsEach));
  for (size_t i = 0; i < ran.size(); ++i) ASSERT_EQ(ran[i], i);
  EXPECT_TRUE(order.idle());
}

// A waiter blocked on a turn is let through by the pass of the call before it.
TEST(HostCallOrderTest, APassWakesTheCallWaitingForTheNextTurn) {
  HostCallOrder order;
  std::atomic<bool> aborted{false};
  const uint64_t first = order.issue(), second = order.issue();
  std::atomic<bool> secondRan{false};
  std::thread waiter([&] {
    order.waitTurn(second, aborted);
    secondRan.store(true);
    order.pass(second);
  });
  order.waitTurn(first, aborted);
  EXPECT_FALSE(secondRan.load());
  EXPECT_FALSE(order.idle());
  order.pass(first);
  waiter.join();
  EXPECT_TRUE(secondRan.load());
  EXPECT_TRUE(order.idle());
}

// After an abort calls may finish out of order: a pass never moves the turn back, and every waiter is let go.
TEST(HostCallOrderTest, AfterAnAbortPassesOutOfOrderNeverMoveTheTurnBack) {
  HostCallOrder order;
  std::atomic<bool> aborted{false};
  const uint64_t a = order.issue(), b = order.issue(), c = order.issue();
  std::thread waiter([&] { order.waitTurn(c, aborted); });
  aborted.store(true);
  order.wakeAll();
  waiter.join();
  order.pass(c);  // the last number issued: the turn is past every call
  EXPECT_TRUE(order.idle());
  order.pass(a);  // earlier numbers passing later leave it there
  order.pass(b);
  EXPECT_TRUE(order.idle());
  const uint64_t d = order.issue();
  EXPECT_FALSE(order.idle());
  order.waitTurn(d, aborted);
  order.pass(d);
  EXPECT_TRUE(order.idle());
}

}  // namespace
}  // namespace chorus
