// Deadlines: fixed ones, and lazy ones whose clock starts at the first look.
#include "core/deadline.h"

#include <gtest/gtest.h>

#include <chrono>

namespace chorus {
namespace {

using Clock = Deadline::Clock;

// Lets `d` of wall time pass on the steady clock (the thing under test is time itself).
void letPass(std::chrono::milliseconds d) {
  const auto until = Clock::now() + d;
  while (Clock::now() < until) {
  }
}

TEST(DeadlineTest, NonPositiveSecondsNeverExpire) {
  for (double s : {0.0, -1.0}) {
    EXPECT_TRUE(Deadline::after(s).isNever());
    LazyDeadline lazy = LazyDeadline::after(s);
    EXPECT_TRUE(lazy.get().isNever());
    EXPECT_FALSE(lazy.get().expired());
    EXPECT_EQ(lazy.get().remainingMs(50), 50);
  }
  EXPECT_TRUE(LazyDeadline().get().isNever());
}

TEST(DeadlineTest, LazyDeadlineStartsAtTheFirstLook) {
  LazyDeadline lazy = LazyDeadline::after(0.1);
  letPass(std::chrono::milliseconds(150));  // longer than the timeout, before anyone looks
  const auto firstLook = Clock::now();
  const Deadline& d = lazy.get();
  EXPECT_FALSE(d.expired());
  EXPECT_GE(d.at(), firstLook + std::chrono::milliseconds(100));
  EXPECT_EQ(lazy.get().at(), d.at()) << "later looks keep the deadline of the first";
  letPass(std::chrono::milliseconds(120));
  EXPECT_TRUE(lazy.get().expired());
}

TEST(DeadlineTest, LazyDeadlineAtAFixedDeadlineKeepsIt) {
  const Deadline fixed = Deadline::after(0.05);
  LazyDeadline lazy = LazyDeadline::at(fixed);
  letPass(std::chrono::milliseconds(20));
  EXPECT_EQ(lazy.get().at(), fixed.at());
}

}  // namespace
}  // namespace chorus
