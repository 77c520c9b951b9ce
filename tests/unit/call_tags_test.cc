// Call tags: both ends of a pair compute the same tag for the same call, different calls get different tags, and
// no tag reaches the reserved range.
#include "src/comm/call_tags.h"

#include <gtest/gtest.h>

#include "transports/reserved_tags.h"

namespace chorus {
namespace {

Op collective(Collective c, int root = -1) { return Op{.collective = c, .root = root}; }

TEST(CallTagsTest, BothEndsAgreeThroughCollectivesAndPairCalls) {
  // Ranks 0, 1 and 2 of one communicator: 0 and 1 also make calls of their own between collectives.
  CallTags r0(3, true), r1(3, true), r2(3, true);
  auto collectiveOnAll = [&](const Op& op) {
    r0.begin(op);
    r1.begin(op);
    r2.begin(op);
    EXPECT_EQ(r0.tagFor(1), r1.tagFor(0));
    EXPECT_EQ(r0.tagFor(2), r2.tagFor(0));
    EXPECT_EQ(r1.tagFor(2), r2.tagFor(1));
  };
  collectiveOnAll(collective(Collective::kAllReduce));
  Op toOne{.collective = Collective::kBroadcast, .peer = 1};
  Op toZero{.collective = Collective::kBroadcast, .peer = 0};
  for (int i = 0; i < 3; ++i) {
    r0.begin(toOne);
    r1.begin(toZero);
    EXPECT_EQ(r0.tagFor(1), r1.tagFor(0));
  }
  collectiveOnAll(collective(Collective::kReduce, 2));
}

TEST(CallTagsTest, DifferentCallsOrPositionsGetDifferentTags) {
  CallTags a(2, true), b(2, true);
  a.begin(collective(Collective::kReduce, 0));
  b.begin(collective(Collective::kReduce, 1));
  EXPECT_NE(a.tagFor(1), b.tagFor(0));  // another root
  CallTags c(2, true), d(2, true);
  c.begin(collective(Collective::kAllReduce));
  d.begin(collective(Collective::kAllReduce));
  d.begin(collective(Collective::kAllReduce));
  EXPECT_NE(c.tagFor(1), d.tagFor(0));  // one call behind
  // Roots above 63 no longer alias (the old tag packed the root into 6 bits).
  CallTags e(200, true), f(200, true);
  e.begin(collective(Collective::kBroadcast, 1));
  f.begin(collective(Collective::kBroadcast, 65));
  EXPECT_NE(e.tagFor(2), f.tagFor(2));
}

TEST(CallTagsTest, TagsStayBelowTheReservedRangeAndAreZeroWhenNotChecking) {
  CallTags t(4, true);
  for (int i = 0; i < 20000; ++i) {
    t.begin(collective(static_cast<Collective>(i % 5), i % 4));
    for (int p = 0; p < 4; ++p) ASSERT_LT(t.tagFor(p), reserved_tags::kFirstReservedTag);
  }
  CallTags off(4, false);
  off.begin(collective(Collective::kAllReduce));
  EXPECT_EQ(off.tagFor(3), 0u);
}

}  // namespace
}  // namespace chorus
