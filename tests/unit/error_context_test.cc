// errorContext: the "rank R, peer P, call" every error message starts with, leaving out what is not given.
#include <gtest/gtest.h>

#include <cerrno>
#include <string>

#include "core/error.h"

namespace chorus {
namespace {

TEST(ErrorContextTest, NamesTheRankThenThePeerThenTheCall) {
  EXPECT_EQ(errorContext(3), "rank 3");
  EXPECT_EQ(errorContext(3, 5), "rank 3, peer 5");
  EXPECT_EQ(errorContext(3, 5, "tcp connect to 10.0.0.2:4000"), "rank 3, peer 5, tcp connect to 10.0.0.2:4000");
  EXPECT_EQ(errorContext(3, "allreduce #12 (count 1000, float32, sum)"),
            "rank 3, allreduce #12 (count 1000, float32, sum)");
  EXPECT_EQ(errorContext(3, std::string("store 127.0.0.1:29500")), "rank 3, store 127.0.0.1:29500");
}

TEST(ErrorContextTest, LeavesOutANoRankPeerAndAnEmptyCall) {
  EXPECT_EQ(errorContext(0, kNoRank, "init"), "rank 0, init");
  EXPECT_EQ(errorContext(0, 0), "rank 0, peer 0");  // rank 0 is a peer like any other
  EXPECT_EQ(errorContext(2, 7, ""), "rank 2, peer 7");
  EXPECT_EQ(errorContext(2, ""), "rank 2");
}

TEST(ErrorContextTest, IsTheContextOfASystemError) {
  try {
    throwSystemError(errorContext(1, 4, "shm connect"), "poll", EINTR);
    FAIL() << "throwSystemError returned";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), chorusSystemError);
    EXPECT_EQ(std::string(e.what()).rfind("rank 1, peer 4, shm connect: poll failed: ", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace chorus
