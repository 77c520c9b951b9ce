// The deadline helpers every poll-until-deadline loop shares: the lazy timeout, the bounded poll and sleep, the
// backoff pause, and the rank list timeouts name.
#include "core/deadline_wait.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

namespace chorus {
namespace {

using Clock = Deadline::Clock;

double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// A pipe whose ends close with the test.
struct Pipe {
  Pipe() { EXPECT_EQ(::pipe(fds), 0); }
  ~Pipe() {
    ::close(fds[0]);
    ::close(fds[1]);
  }
  int fds[2] = {-1, -1};
};

TEST(DeadlineWaitTest, BuildsTheTimeoutMessageOnlyOnceExpired) {
  int built = 0;
  auto message = [&] {
    ++built;
    return std::string("rank 0, test: timed out waiting for ranks 1, 2");
  };
  throwIfExpired(Deadline::never(), message);
  throwIfExpired(Deadline::after(60), message);
  EXPECT_EQ(built, 0);
  try {
    throwIfExpired(Deadline::after(1e-9), message);
    FAIL() << "an expired deadline did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), chorusTimeout);
    EXPECT_EQ(e.failure(), Failure::kTimeout);
    EXPECT_STREQ(e.what(), "rank 0, test: timed out waiting for ranks 1, 2");
  }
  EXPECT_EQ(built, 1);
}

TEST(DeadlineWaitTest, AWaitOnSilentFdsTimesOutWithTheLazyMessage) {
  Pipe p;
  pollfd fd{p.fds[0], POLLIN, 0};
  const Deadline deadline = Deadline::after(0.1);
  const auto start = Clock::now();
  int polls = 0;
  try {
    for (;;) {
      throwIfExpired(deadline, [] { return std::string("rank 3: timed out waiting for ranks ") + "4"; });
      EXPECT_EQ(pollWithin({&fd, 1}, deadline, 1000, "rank 3, test"), 0);
      ++polls;
    }
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), chorusTimeout);
    EXPECT_STREQ(e.what(), "rank 3: timed out waiting for ranks 4");
  }
  EXPECT_GE(secondsSince(start), 0.1);
  EXPECT_LT(secondsSince(start), 2.0);
  EXPECT_GE(polls, 1);
  EXPECT_LT(polls, 50);  // slept in poll, not spun
}

TEST(DeadlineWaitTest, ReadyFdsReturnBeforeTheDeadline) {
  Pipe silent, ready;
  ASSERT_EQ(::write(ready.fds[1], "x", 1), 1);
  std::vector<pollfd> fds{{silent.fds[0], POLLIN, 0}, {ready.fds[0], POLLIN, 0}};
  const auto start = Clock::now();
  EXPECT_EQ(pollWithin(fds, Deadline::after(30), 10000, "test"), 1);
  EXPECT_LT(secondsSince(start), 1.0);
  EXPECT_EQ(fds[0].revents, 0);
  EXPECT_TRUE(fds[1].revents & POLLIN);
}

TEST(DeadlineWaitTest, ANeverDeadlineWaitsAtMostTheCap) {
  Pipe p;
  pollfd fd{p.fds[0], POLLIN, 0};
  auto start = Clock::now();
  EXPECT_EQ(pollWithin({&fd, 1}, Deadline::never(), 50, "test"), 0);
  EXPECT_GE(secondsSince(start), 0.045);
  EXPECT_LT(secondsSince(start), 1.0);
  start = Clock::now();
  sleepWithin(Deadline::never(), 50);
  EXPECT_GE(secondsSince(start), 0.045);
  EXPECT_LT(secondsSince(start), 1.0);
}

TEST(DeadlineWaitTest, TheDeadlineCutsTheCapShort) {
  auto start = Clock::now();
  EXPECT_EQ(pollWithin({}, Deadline::after(0.05), 10000, "test"), 0);
  EXPECT_LT(secondsSince(start), 1.0);
  start = Clock::now();
  sleepWithin(Deadline::after(0.05), 10000);
  EXPECT_LT(secondsSince(start), 1.0);
}

TEST(DeadlineWaitTest, AFailedPollIsASystemErrorNamingTheContext) {
  // More descriptors than the process may open: poll fails with EINVAL.
  rlimit limit{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &limit), 0);
  if (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur > (1u << 22)) GTEST_SKIP() << "no finite descriptor limit";
  std::vector<pollfd> fds(limit.rlim_cur + 1, pollfd{-1, POLLIN, 0});
  try {
    pollWithin(fds, Deadline::after(5), 10, "rank 1, peer 2, test setup");
    FAIL() << "poll with too many descriptors did not fail";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), chorusSystemError);
    EXPECT_EQ(std::string(e.what()).rfind("rank 1, peer 2, test setup: poll failed: ", 0), 0u) << e.what();
  }
}

TEST(DeadlineWaitTest, PausesWithTheBackoffUntilTheDeadline) {
  struct CountingBackoff {
    void pause() { ++pauses; }
    int pauses = 0;
  } backoff;
  pauseWithin(Deadline::never(), backoff, [] { return std::string("never"); });
  EXPECT_EQ(backoff.pauses, 1);
  try {
    pauseWithin(Deadline::after(1e-9), backoff, [] { return std::string("rank 0: the stream did not finish"); });
    FAIL() << "an expired deadline did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), chorusTimeout);
    EXPECT_STREQ(e.what(), "rank 0: the stream did not finish");
  }
  EXPECT_EQ(backoff.pauses, 1);  // no pause once the deadline has passed
}

TEST(DeadlineWaitTest, FormatsRankLists) {
  EXPECT_EQ(formatRankList({}), "");
  EXPECT_EQ(formatRankList(std::vector<int>{7}), "7");
  EXPECT_EQ(formatRankList(std::vector<int>{1, 2, 5}), "1, 2, 5");
}

}  // namespace
}  // namespace chorus
