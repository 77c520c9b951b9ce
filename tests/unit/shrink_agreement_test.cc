// The store operations elastic jobs rest on (SET_OWNED keys that go with their connection, COMPARE_SET, CHECK_EACH)
// and the survivors' agreement of chorusCommShrink over them, ranks as threads with a store client each: a rank
// that is "lost" closes its client, as the kernel does for a killed process.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <thread>
#include <vector>

#include "core/bootstrap/store.h"
#include "core/error.h"
#include "src/comm/shrink_agreement.h"

namespace chorus {
namespace {

using namespace std::chrono_literals;

const std::string kShrinkJob = "shrink-agreement-test";

Deadline shrinkDeadline() { return Deadline::after(20); }

std::unique_ptr<StoreClient> client(const StoreServer& server, int rank) {
  return std::make_unique<StoreClient>("127.0.0.1", server.port(), kShrinkJob, "", rank, shrinkDeadline());
}

// Waits (bounded) until the server has seen a closed client's keys go: it learns of the close asynchronously.
bool keyGoneWithin(StoreClient& store, const std::string& key, std::chrono::seconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (!store.check({key}, shrinkDeadline())) return true;
    std::this_thread::sleep_for(1ms);
  }
  return false;
}

TEST(StoreElasticOps, AnOwnedKeyGoesWithItsConnectionAndAPlainSetEndsTheOwnership) {
  StoreServer server("127.0.0.1", 0, kShrinkJob, "");
  auto watcher = client(server, 0);
  auto owner = client(server, 1);
  owner->setOwned("a", bytesOf("1"), shrinkDeadline());
  owner->setOwned("b", bytesOf("1"), shrinkDeadline());
  watcher->set("b", bytesOf("2"), shrinkDeadline());  // b is the watcher's now
  EXPECT_EQ(watcher->checkEach({"a", "b", "c"}, shrinkDeadline()), (std::vector<bool>{true, true, false}));
  owner.reset();
  EXPECT_TRUE(keyGoneWithin(*watcher, "a", 10s));
  EXPECT_TRUE(watcher->check({"b"}, shrinkDeadline()));
  EXPECT_EQ(textOf(watcher->get("b", shrinkDeadline())), "2");
}

TEST(StoreElasticOps, CompareSetStoresTheFirstProposalOnly) {
  StoreServer server("127.0.0.1", 0, kShrinkJob, "");
  auto a = client(server, 0);
  auto b = client(server, 1);
  EXPECT_EQ(textOf(a->compareSet("d", {}, bytesOf("first"), shrinkDeadline())), "first");
  EXPECT_EQ(textOf(b->compareSet("d", {}, bytesOf("second"), shrinkDeadline())), "first");
  EXPECT_EQ(textOf(b->compareSet("d", bytesOf("first"), bytesOf("third"), shrinkDeadline())), "third");
  EXPECT_EQ(textOf(a->compareSet("d", bytesOf("first"), bytesOf("fourth"), shrinkDeadline())), "third");
  EXPECT_EQ(textOf(a->compareSet("missing", bytesOf("x"), bytesOf("y"), shrinkDeadline())), "");
  EXPECT_FALSE(a->check({"missing"}, shrinkDeadline()));
}

TEST(RankLists, EncodeAndDecode) {
  EXPECT_EQ(encodeRankList({0, 2, 5}), "0,2,5");
  EXPECT_EQ(decodeRankList("0,2,5", 6), (std::vector<int>{0, 2, 5}));
  EXPECT_TRUE(decodeRankList("", 6).empty());
  for (const char* bad : {"0,,2", "2,1", "0,6", "x", "1,"}) {
    EXPECT_THROW(decodeRankList(bad, 6), Error) << bad;
  }
}

// n ranks, each with its own client and its card set owned under "c/".
struct StoreClients {
  StoreClients(StoreServer& server, int n) {
    for (int r = 0; r < n; ++r) {
      clients.push_back(client(server, r));
      clients.back()->setOwned(cardKey("c/", r), {}, shrinkDeadline());
    }
  }
  ShrinkRequest request(int rank, const std::vector<int>* excluded = nullptr) const {
    ShrinkRequest q;
    q.commPrefix = "c/";
    q.shrinkPrefix = "c/shrink0/";
    q.rank = rank;
    q.size = static_cast<int>(clients.size());
    q.explicitExclusion = excluded != nullptr;
    if (excluded) q.excluded = *excluded;
    q.who = errorContext(rank);
    return q;
  }
  std::vector<std::unique_ptr<StoreClient>> clients;
};

TEST(ShrinkAgreement, SurvivorsAgreeOnTheRanksStillAlive) {
  StoreServer server("127.0.0.1", 0, kShrinkJob, "");
  StoreClients ranks(server, 5);
  ranks.clients[1].reset();
  ranks.clients[3].reset();
  std::vector<std::future<std::vector<int>>> answers;
  for (int r : {0, 2, 4}) {
    answers.push_back(std::async(std::launch::async, [&, r] {
      return agreeOnSurvivors(*ranks.clients[r], ranks.request(r), Deadline::after(10));
    }));
  }
  for (auto& a : answers) EXPECT_EQ(a.get(), (std::vector<int>{0, 2, 4}));
}

TEST(ShrinkAgreement, ASurvivorWaitsForALiveRankThatHasNotCalledYet) {
  StoreServer server("127.0.0.1", 0, kShrinkJob, "");
  StoreClients ranks(server, 3);
  auto early = std::async(std::launch::async,
                          [&] { return agreeOnSurvivors(*ranks.clients[0], ranks.request(0), Deadline::after(10)); });
  EXPECT_EQ(early.wait_for(200ms), std::future_status::timeout);  // rank 1 lives: it must be waited for
  ranks.clients[2].reset();
  auto late = std::async(std::launch::async,
                         [&] { return agreeOnSurvivors(*ranks.clients[1], ranks.request(1), Deadline::after(10)); });
  EXPECT_EQ(early.get(), (std::vector<int>{0, 1}));
  EXPECT_EQ(late.get(), (std::vector<int>{0, 1}));
}

TEST(ShrinkAgreement, ARankCallingAfterTheDecisionLearnsItWasLeftOut) {
  StoreServer server("127.0.0.1", 0, kShrinkJob, "");
  StoreClients ranks(server, 3);
  // Rank 2's card goes (its peers see it as lost) while its process, here a thread, lives on and calls late.
  auto lateClient = client(server, 2);
  ranks.clients[2].reset();
  std::vector<std::future<std::vector<int>>> answers;
  for (int r : {0, 1}) {
    answers.push_back(std::async(std::launch::async, [&, r] {
      return agreeOnSurvivors(*ranks.clients[r], ranks.request(r), Deadline::after(10));
    }));
  }
  for (auto& a : answers) EXPECT_EQ(a.get(), (std::vector<int>{0, 1}));
  try {
    agreeOnSurvivors(*lateClient, ranks.request(2), Deadline::after(10));
    ADD_FAILURE() << "a rank left out was let in";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), chorusRemoteError);
    EXPECT_NE(std::string(e.what()).find("not one of them"), std::string::npos) << e.what();
  }
}

TEST(ShrinkAgreement, ExplicitListsMustAgreeAndNameNoDeadMember) {
  StoreServer server("127.0.0.1", 0, kShrinkJob, "");
  StoreClients ranks(server, 4);
  const std::vector<int> one = {3}, other = {2, 3};
  auto a = std::async(std::launch::async,
                      [&] { return agreeOnSurvivors(*ranks.clients[0], ranks.request(0, &one), Deadline::after(10)); });
  auto b = std::async(std::launch::async, [&] {
    return agreeOnSurvivors(*ranks.clients[1], ranks.request(1, &other), Deadline::after(10));
  });
  // Rank 2 is a member for rank 0; it calls with rank 0's list, so rank 0's members all join.
  auto c = std::async(std::launch::async,
                      [&] { return agreeOnSurvivors(*ranks.clients[2], ranks.request(2, &one), Deadline::after(10)); });
  for (auto* f : {&a, &c}) {
    try {
      f->get();
      ADD_FAILURE() << "disagreeing lists accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), chorusInvalidUsage) << e.what();
      EXPECT_NE(std::string(e.what()).find("same list"), std::string::npos) << e.what();
    }
  }
  // Rank 1's members are 0 and 1: both joined, with different lists.
  EXPECT_THROW(b.get(), Error);
  // An excluded rank must not call.
  try {
    agreeOnSurvivors(*ranks.clients[3], ranks.request(3, &one), Deadline::after(10));
    ADD_FAILURE() << "an excluded rank's call accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), chorusInvalidUsage);
  }
}

TEST(ShrinkAgreement, AListedMemberThatIsGoneIsNamed) {
  StoreServer server("127.0.0.1", 0, kShrinkJob, "");
  StoreClients ranks(server, 3);
  ranks.clients[1].reset();
  const std::vector<int> none = {2};
  try {
    agreeOnSurvivors(*ranks.clients[0], ranks.request(0, &none), Deadline::after(10));
    ADD_FAILURE() << "a dead member was waited for in silence";
  } catch (const Error& e) {
    EXPECT_EQ(e.failure(), Failure::kPeerLost);
    EXPECT_EQ(e.lostPeer(), 1);
    EXPECT_NE(std::string(e.what()).find("rank 1 is gone"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace chorus
