// The order of host calls: numbers run one at a time in issue order, waiters are woken by the pass that frees
// their turn, and the order is idle exactly when every issued call has passed its turn on. The call lock: one
// holder at a time, whichever way it was taken.
#include "src/comm/call_order.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace chorus {
namespace {

TEST(CallOrderTest, OneThreadNeverWaitsAndIsIdleAfterEachPass) {
  CallOrder order;
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
TEST(CallOrderTest, CallsRunInIssueOrderAcrossThreads) {
  constexpr int kThreads = 8, kCallsEach = 200;
  CallOrder order;
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
TEST(CallOrderTest, APassWakesTheCallWaitingForTheNextTurn) {
  CallOrder order;
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
TEST(CallOrderTest, AfterAnAbortPassesOutOfOrderNeverMoveTheTurnBack) {
  CallOrder order;
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

// The common call takes its number, its turn and the lock in one step, only where the order is idle and unlocked.
TEST(CallOrderTest, AnIdleOrderIssuesLockedInOneStep) {
  CallOrder order;
  std::atomic<bool> aborted{false};
  uint64_t n = 99;
  ASSERT_TRUE(order.issueLockedIfIdle(n));
  EXPECT_EQ(n, 0u);
  EXPECT_FALSE(order.idle());
  EXPECT_FALSE(order.tryLock());
  uint64_t other = 99;
  EXPECT_FALSE(order.issueLockedIfIdle(other));  // locked, and a number outstanding
  order.unlockAndPass(n);
  EXPECT_TRUE(order.idle());

  const uint64_t queued = order.issue();  // a host stream's call, not yet run
  EXPECT_FALSE(order.issueLockedIfIdle(other));
  order.waitTurn(queued, aborted);
  order.pass(queued);
  ASSERT_TRUE(order.tryLock());  // a registration: no number, the lock alone
  EXPECT_FALSE(order.issueLockedIfIdle(other));
  order.unlock();
  ASSERT_TRUE(order.issueLockedIfIdle(other));
  EXPECT_EQ(other, queued + 1);
  order.unlockAndPass(other);
  EXPECT_TRUE(order.idle());
}

// Every way of taking the lock excludes every other: blocking calls (one step when idle, else number, turn and
// lock), a device queue's thread and registrations (the lock alone). Each thread checks that it is alone inside.
TEST(CallOrderTest, TheLockHasOneHolderAtATime) {
  constexpr int kThreads = 6, kRounds = 5000;
  CallOrder order;
  std::atomic<bool> aborted{false};
  std::atomic<int> inside{0};
  std::atomic<int> overlaps{0};
  // Now and then the holder yields inside, so that the others come to wait for the lock and for their turns.
  auto alone = [&](int r) {
    if (inside.fetch_add(1) != 0) overlaps.fetch_add(1);
    if (r % 256 == 0) std::this_thread::yield();
    inside.fetch_sub(1);
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        uint64_t n = 0;
        if (t % 3 == 2) {
          order.lock();
          alone(r);
          order.unlock();
        } else if (order.issueLockedIfIdle(n)) {
          alone(r);
          order.unlockAndPass(n);
        } else {
          n = order.issue();
          order.waitTurn(n, aborted);
          order.lock();
          alone(r);
          order.unlock();
          order.pass(n);
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_TRUE(order.idle());
  EXPECT_TRUE(order.tryLock());
}

// An unlock wakes a thread waiting for the lock.
TEST(CallOrderTest, AnUnlockWakesTheLockWaiter) {
  CallOrder order;
  order.lock();
  std::atomic<bool> took{false};
  std::thread waiter([&] {
    order.lock();
    took.store(true);
    order.unlock();
  });
  EXPECT_FALSE(took.load());
  order.unlock();
  waiter.join();
  EXPECT_TRUE(took.load());
}

// Numbers are counted modulo 2^24 in the order's word: past the wrap, turns still come in issue order.
TEST(CallOrderTest, NumbersWrapAndStayInOrder) {
  CallOrder order;
  std::atomic<bool> aborted{false};
  uint64_t n = 0;
  for (uint64_t i = 0; i < (uint64_t{1} << 24) - 2; ++i) {
    ASSERT_TRUE(order.issueLockedIfIdle(n));
    order.unlockAndPass(n);
  }
  const uint64_t a = order.issue(), b = order.issue(), c = order.issue(), d = order.issue();
  EXPECT_EQ(b, a + 1);
  EXPECT_EQ(c, 0u);  // wrapped
  std::atomic<int> ran{0};
  std::thread later([&] {
    order.waitTurn(d, aborted);
    EXPECT_EQ(ran.load(), 3);
    order.pass(d);
  });
  for (uint64_t x : {a, b, c}) {
    order.waitTurn(x, aborted);
    ran.fetch_add(1);
    order.pass(x);
  }
  later.join();
  EXPECT_TRUE(order.idle());
}

}  // namespace
}  // namespace chorus
