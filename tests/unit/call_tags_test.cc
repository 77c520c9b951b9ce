// Call tags: a send and the receive it meets carry the same tag, different calls get different tags, and no tag
// reaches the reserved range.
#include "src/comm/call_tags.h"

#include <gtest/gtest.h>

#include <vector>

#include "transports/reserved_tags.h"

namespace chorus {
namespace {

CallArgs collective(Collective c, int root = -1) { return CallArgs{.collective = c, .root = root}; }

// Both directions of every pair agree: a's tag to b is b's tag from a.
void expectPairsAgree(const std::vector<CallTags*>& ranks) {
  for (size_t a = 0; a < ranks.size(); ++a) {
    for (size_t b = 0; b < ranks.size(); ++b) {
      if (a == b) continue;
      EXPECT_EQ(ranks[a]->sendTag(static_cast<int>(b)), ranks[b]->recvTag(static_cast<int>(a))) << a << " to " << b;
    }
  }
}

TEST(CallTagsTest, BothEndsAgreeThroughCollectivesAndPairCalls) {
  // Ranks 0, 1 and 2 of one communicator: 0 and 1 also trade calls of their own between collectives.
  CallTags r0(3, true), r1(3, true), r2(3, true);
  auto collectiveOnAll = [&](const CallArgs& op) {
    r0.begin(op);
    r1.begin(op);
    r2.begin(op);
    expectPairsAgree({&r0, &r1, &r2});
  };
  collectiveOnAll(collective(Collective::kAllReduce));
  const CallArgs toOne{.type = chorusInt32, .peer = 1}, toZero{.type = chorusInt32, .peer = 0};
  // 0 sends to 1 three times; 1 receives three times; then 1 sends once and 0 receives it.
  for (int i = 0; i < 3; ++i) {
    r0.beginPointToPoint(toOne, true, false);
    r1.beginPointToPoint(toZero, false, true);
    EXPECT_EQ(r0.sendTag(1), r1.recvTag(0));
  }
  r1.beginPointToPoint(toZero, true, false);
  r0.beginPointToPoint(toOne, false, true);
  EXPECT_EQ(r1.sendTag(0), r0.recvTag(1));
  collectiveOnAll(collective(Collective::kReduce, 2));
}

// NCCL groups let each end post its receive before its send: the k-th send still meets the k-th receive.
TEST(CallTagsTest, SendsAndReceivesAreCountedApart) {
  CallTags a(2, true), b(2, true);
  const CallArgs toB{.type = chorusFloat32, .peer = 1}, toA{.type = chorusFloat32, .peer = 0};
  a.beginPointToPoint(toB, false, true);  // a: receive first
  b.beginPointToPoint(toA, false, true);  // b: receive first too
  const uint32_t aReceives = a.recvTag(1), bReceives = b.recvTag(0);
  a.beginPointToPoint(toB, true, false);
  b.beginPointToPoint(toA, true, false);
  EXPECT_EQ(a.sendTag(1), bReceives);
  EXPECT_EQ(b.sendTag(0), aReceives);
  // Another datatype is another signature.
  CallTags c(2, true);
  c.beginPointToPoint(CallArgs{.type = chorusInt8, .peer = 1}, true, false);
  EXPECT_NE(c.sendTag(1), a.sendTag(1));
}

TEST(CallTagsTest, DifferentCallsOrPositionsGetDifferentTags) {
  CallTags a(2, true), b(2, true);
  a.begin(collective(Collective::kReduce, 0));
  b.begin(collective(Collective::kReduce, 1));
  EXPECT_NE(a.sendTag(1), b.recvTag(0));  // another root
  CallTags c(2, true), d(2, true);
  c.begin(collective(Collective::kAllReduce));
  d.begin(collective(Collective::kAllReduce));
  d.begin(collective(Collective::kAllReduce));
  EXPECT_NE(c.sendTag(1), d.recvTag(0));  // one call behind
  // Roots above 63 do not alias (as they would in a tag that packed the root into 6 bits).
  CallTags e(200, true), f(200, true);
  e.begin(collective(Collective::kBroadcast, 1));
  f.begin(collective(Collective::kBroadcast, 65));
  EXPECT_NE(e.sendTag(2), f.recvTag(2));
}

TEST(CallTagsTest, TagsStayBelowTheReservedRangeAndAreZeroWhenNotChecking) {
  CallTags t(4, true);
  for (int i = 0; i < 20000; ++i) {
    t.begin(collective(static_cast<Collective>(i % 5), i % 4));
    for (int p = 0; p < 4; ++p) {
      ASSERT_LT(t.sendTag(p), reserved_tags::kFirstReservedTag);
      ASSERT_LT(t.recvTag(p), reserved_tags::kFirstReservedTag);
    }
  }
  CallTags off(4, false);
  off.begin(collective(Collective::kAllReduce));
  EXPECT_EQ(off.sendTag(3), 0u);
  EXPECT_EQ(off.recvTag(3), 0u);
}

}  // namespace
}  // namespace chorus
