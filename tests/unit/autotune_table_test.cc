// The autotuner's bookkeeping (algorithms/selection/autotune_table.h) on made-up timings: it converges within its
// budget on the fastest candidate, two tables fed the same times decide alike, CHORUS_ALGO rules are left alone, and
// its table survives being written out and read back.
#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "algorithms/selection/autotune_table.h"

namespace chorus {
namespace {

constexpr size_t kChunk = 512 << 10;

CostInputs twoHosts() {
  CostInputs in;
  in.nranks = 4;
  in.nhosts = 2;
  in.maxRanksPerHost = 2;
  in.coresPerHost = 2;
  return in;
}

using Timing = std::function<double(const TuneCandidate&)>;

// Calls until the bucket of (c, width, bytes) settles; returns the calls it took (or -1 past 100).
int converge(AutotuneTable& t, Collective c, int width, size_t bytes, const Timing& timing) {
  for (int calls = 0; calls < 100; ++calls) {
    const AutotuneTable::Pick p = t.pick(c, width, bytes);
    if (!p.tuned) return -1;
    if (!p.trial) return calls;
    if (t.record(timing(p.candidate))) t.finishStage();  // one rank: its times are the agreed ones
  }
  return -1;
}

TEST(AutotuneTableTest, SettlesOnTheFastestAlgorithmAndSliceWithinItsBudget) {
  AutotuneTable t(twoHosts(), AlgoRules(), kChunk);
  // Ring is fastest whatever the model thinks, and fastest of all with 2 MiB slices.
  const Timing timing = [](const TuneCandidate& c) {
    if (c.algorithm != AlgorithmId::kRing) return 10.0;
    return c.sliceBytes == kChunk * 4 ? 5.0 : 8.0;
  };
  const int calls = converge(t, Collective::kAllReduce, 4, 16 << 20, timing);
  ASSERT_GT(calls, 0);
  EXPECT_LE(calls, AutotuneTable::kMaxCallsPerBucket);
  const AutotuneTable::Pick p = t.pick(Collective::kAllReduce, 4, (16 << 20) + 4);  // same bucket
  EXPECT_TRUE(p.tuned);
  EXPECT_FALSE(p.trial);
  EXPECT_EQ(p.candidate.algorithm, AlgorithmId::kRing);
  EXPECT_EQ(p.candidate.sliceBytes, kChunk * 4);
  EXPECT_EQ(t.settledBuckets(), 1);
  EXPECT_EQ(t.asRules(), "allreduce.32:16M-32M=ring@2M");
  // Another width is another bucket, not yet tried.
  EXPECT_TRUE(t.pick(Collective::kAllReduce, 2, 16 << 20).trial);
}

// Each candidate's calls run back to back, and the first of each run (a cold call: new scratch memory, the
// transition from another algorithm) does not count: a candidate slow only at first still wins.
TEST(AutotuneTableTest, CandidatesRunBackToBackAndTheirFirstCallDoesNotCount) {
  TrialStage stage;
  stage.start(3, 3);
  EXPECT_EQ(stage.schedule, (std::vector<int>{0, 0, 0, 1, 1, 1, 2, 2, 2}));
  for (double t : {9.0, 5.0, 6.0, 1.0, 7.0, 7.0, 50.0, 4.0, 4.0}) stage.record(t);
  const std::vector<double> score = stage.scores(3);
  EXPECT_EQ(score, (std::vector<double>{5.5, 7.0, 4.0}));  // the mean of the two that count
  stage.start(3, 2, 2);
  EXPECT_EQ(stage.schedule, (std::vector<int>{0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2}));
  AutotuneTable t(twoHosts(), AlgoRules(), kChunk);
  std::map<AlgorithmId, int> calls;
  const Timing coldTree = [&](const TuneCandidate& c) {
    const bool first = calls[c.algorithm]++ == 0;
    if (c.algorithm == AlgorithmId::kTree) return first ? 100.0 : 3.0;
    return 6.0;
  };
  ASSERT_GT(converge(t, Collective::kAllReduce, 4, 64 << 10, coldTree), 0);
  EXPECT_EQ(t.pick(Collective::kAllReduce, 4, 64 << 10).candidate.algorithm, AlgorithmId::kTree);
}

// The first stage goes twice over the candidates, so that each scores by calls far apart in time: a slow spell of
// the machine over several candidates' runs in a row does not rule out the fastest among them.
TEST(AutotuneTableTest, ASlowSpellDoesNotRuleOutTheFastestAlgorithm) {
  AutotuneTable t(twoHosts(), AlgoRules(), kChunk);
  int call = 0, spellFrom = 0;
  const Timing spell = [&](const TuneCandidate& c) {
    ++call;
    const bool fastest = c.algorithm == AlgorithmId::kHierarchical;
    if (fastest && spellFrom == 0) spellFrom = call;  // from the fastest's first call, 6 slow calls
    const bool slow = spellFrom > 0 && call < spellFrom + 6;
    return (slow ? 10 : 1) * (fastest ? 60.0 : 100.0);
  };
  ASSERT_GT(converge(t, Collective::kAllReduce, 4, 64 << 10, spell), 0);
  EXPECT_EQ(t.pick(Collective::kAllReduce, 4, 64 << 10).candidate.algorithm, AlgorithmId::kHierarchical);
}

// One lucky call does not make an algorithm the fastest: two calls that count score by their mean (unless one was
// disturbed, above), so a steady algorithm beats one that is slower but ran one call faster.
TEST(AutotuneTableTest, ALuckyCallDoesNotOutweighASteadyAlgorithm) {
  TrialStage stage;
  stage.start(2, 2, 2);
  for (double t : {99.0, 100.0, 99.0, 120.0, 99.0, 100.0, 99.0, 85.0}) stage.record(t);
  EXPECT_EQ(stage.scores(2), (std::vector<double>{100.0, 102.5}));
  stage.start(1, 3);
  for (double t : {99.0, 60.0, 600.0}) stage.record(t);
  EXPECT_EQ(stage.scores(1), (std::vector<double>{60.0}));  // the other disturbed
}

TEST(AutotuneTableTest, ASliceSizeMustBeatTheDefaultByMoreThanNoise) {
  AutotuneTable t(twoHosts(), AlgoRules(), kChunk);
  const Timing timing = [](const TuneCandidate& c) {
    if (c.algorithm != AlgorithmId::kTree) return 10.0;
    return c.sliceBytes == 0 ? 5.0 : 4.9;  // 2% better: noise
  };
  ASSERT_GT(converge(t, Collective::kBroadcast, 4, 8 << 20, timing), 0);
  const AutotuneTable::Pick p = t.pick(Collective::kBroadcast, 4, 8 << 20);
  EXPECT_EQ(p.candidate.algorithm, AlgorithmId::kTree);
  EXPECT_EQ(p.candidate.sliceBytes, 0u);
}

// The algorithm as it is keeps the calls of the stages before the variants: delays on its calls among the variants
// do not hand the bucket to a variant no faster than it.
TEST(AutotuneTableTest, AVariantIsComparedWithTheAlgorithmsBestCallOfEveryStage) {
  AutotuneTable t(twoHosts(), AlgoRules(), kChunk);
  int plainRingCalls = 0;
  const Timing timing = [&](const TuneCandidate& c) {
    if (c.algorithm != AlgorithmId::kRing) return 20.0;
    if (c.sliceBytes != 0) return 9.8;  // 2% better than the ring as it is: noise
    return ++plainRingCalls <= 4 ? 10.0 : 30.0;  // delayed once the algorithms' stage is over
  };
  ASSERT_GT(converge(t, Collective::kAllReduce, 4, 16 << 20, timing), 0);
  ASSERT_EQ(plainRingCalls, 4 + 3);  // the variants' stage ran it three times
  const AutotuneTable::Pick p = t.pick(Collective::kAllReduce, 4, 16 << 20);
  EXPECT_EQ(p.candidate.algorithm, AlgorithmId::kRing);
  EXPECT_EQ(p.candidate.sliceBytes, 0u);
}

TEST(AutotuneTableTest, SmallSizesTryAlgorithmsOnly) {
  AutotuneTable t(twoHosts(), AlgoRules(), kChunk);
  std::map<size_t, int> slicesTried;
  const Timing timing = [&](const TuneCandidate& c) {
    ++slicesTried[c.sliceBytes];
    return c.algorithm == AlgorithmId::kHierarchical ? 1.0 : 2.0;
  };
  const int calls = converge(t, Collective::kAllReduce, 4, 64 << 10, timing);
  ASSERT_GT(calls, 0);
  EXPECT_EQ(slicesTried.size(), 1u);
  EXPECT_EQ(t.pick(Collective::kAllReduce, 4, 64 << 10).candidate.algorithm, AlgorithmId::kHierarchical);
}

TEST(AutotuneTableTest, TablesFedTheSameTimesDecideAlike) {
  AutotuneTable a(twoHosts(), AlgoRules(), kChunk), b(twoHosts(), AlgoRules(), kChunk);
  // Noisy times, the same sequence for both (as every rank sees after the agreement).
  uint32_t state = 12345;
  std::vector<double> noise;
  for (int i = 0; i < 64; ++i) {
    state = state * 1664525u + 1013904223u;
    noise.push_back(1.0 + (state >> 8) % 1000 / 1000.0);
  }
  size_t ia = 0, ib = 0;
  ASSERT_GT(converge(a, Collective::kReduceScatter, 2, 1 << 20, [&](const TuneCandidate&) { return noise[ia++]; }), 0);
  ASSERT_GT(converge(b, Collective::kReduceScatter, 2, 1 << 20, [&](const TuneCandidate&) { return noise[ib++]; }), 0);
  EXPECT_EQ(a.asRules(), b.asRules());
  EXPECT_FALSE(a.asRules().empty());
}

// With TCP pairs that have four sockets per rail and stripe over one by default, a striped size tries 2 and 4 too
// (with the slice sizes, two calls each) and keeps the one that wins, within the budget; the table says so ("/2")
// and reads back.
TEST(AutotuneTableTest, SocketsPerRailAreTriedWhereMessagesStripe) {
  AutotuneTable t(twoHosts(), AlgoRules(), kChunk, 4, 1);
  std::map<int, int> triedSockets;
  const Timing timing = [&](const TuneCandidate& c) {
    ++triedSockets[c.sockets];
    if (c.algorithm != AlgorithmId::kRing) return 10.0;
    return c.sockets == 2 ? 5.0 : 8.0;
  };
  const int calls = converge(t, Collective::kAllReduce, 4, 4 << 20, timing);
  ASSERT_GT(calls, 0);
  EXPECT_LE(calls, AutotuneTable::kMaxCallsPerBucket);
  EXPECT_EQ(triedSockets[2], AutotuneTable::kVariantRoundsForMore);
  EXPECT_EQ(triedSockets[4], AutotuneTable::kVariantRoundsForMore);
  EXPECT_EQ(triedSockets.count(1), 0u) << "1 is the default: tried as sockets 0";
  const AutotuneTable::Pick p = t.pick(Collective::kAllReduce, 4, 4 << 20);
  EXPECT_FALSE(p.trial);
  EXPECT_EQ(p.candidate.sockets, 2);
  EXPECT_EQ(t.asRules(), "allreduce.32:4M-8M=ring/2");
  AutotuneTable loaded(twoHosts(), AlgoRules(), kChunk, 4, 1);
  loaded.load(AlgoRules::parse(t.asRules()));
  EXPECT_EQ(loaded.pick(Collective::kAllReduce, 4, 4 << 20).candidate.sockets, 2);
  // Below the striping size, and where no pair has sockets to choose from, sockets are not tried.
  triedSockets.clear();
  ASSERT_GT(converge(t, Collective::kAllReduce, 4, 64 << 10, timing), 0);
  EXPECT_EQ(triedSockets.size(), 1u);
  AutotuneTable single(twoHosts(), AlgoRules(), kChunk, 1, 1);
  triedSockets.clear();
  ASSERT_GT(converge(single, Collective::kAllReduce, 4, 4 << 20, timing), 0);
  EXPECT_EQ(triedSockets.size(), 1u);
}

// The most calls a bucket can take: five algorithms, then every variant.
TEST(AutotuneTableTest, TheWorstCaseStaysWithinTheBudget) {
  AutotuneTable t(twoHosts(), AlgoRules(), kChunk, 4, 2);
  const Timing flat = [](const TuneCandidate&) { return 1.0; };
  const int calls = converge(t, Collective::kAllReduce, 4, 64 << 20, flat);
  ASSERT_GT(calls, 0);
  EXPECT_LE(calls, AutotuneTable::kMaxCallsPerBucket);
}

TEST(AutotuneTableTest, CallsAForcedRuleCoversAreNeverTuned) {
  AutotuneTable t(twoHosts(), AlgoRules::parse("allreduce:0-1M=ring"), kChunk);
  EXPECT_FALSE(t.pick(Collective::kAllReduce, 4, 64 << 10).tuned);
  EXPECT_TRUE(t.pick(Collective::kAllReduce, 4, 4 << 20).tuned);
  // Alltoallv's size is the same 0 for every call: not tuned; nor point-to-point calls.
  EXPECT_FALSE(t.pick(Collective::kAllToAllv, 4, 0).tuned);
  EXPECT_FALSE(t.pick(Collective::kSend, 4, 100).tuned);
}

TEST(AutotuneTableTest, AWrittenTableLoadsBackSettled) {
  AutotuneTable t(twoHosts(), AlgoRules(), kChunk);
  const Timing ring = [](const TuneCandidate& c) { return c.algorithm == AlgorithmId::kRing ? 1.0 : 2.0; };
  for (size_t bytes : {size_t{64} << 10, size_t{128} << 10, size_t{4} << 20}) {
    ASSERT_GT(converge(t, Collective::kAllReduce, 4, bytes, ring), 0);
  }
  const std::string rules = t.asRules();
  EXPECT_EQ(rules, "allreduce.32:64K-256K=ring,4M-8M=ring") << "adjacent sizes with one choice are one range";
  AutotuneTable loaded(twoHosts(), AlgoRules(), kChunk);
  loaded.load(AlgoRules::parse(rules));
  for (size_t bytes : {size_t{64} << 10, size_t{200} << 10, size_t{5} << 20}) {
    const AutotuneTable::Pick p = loaded.pick(Collective::kAllReduce, 4, bytes);
    EXPECT_TRUE(p.tuned);
    EXPECT_FALSE(p.trial) << bytes;
    EXPECT_EQ(p.candidate.algorithm, AlgorithmId::kRing);
  }
  EXPECT_EQ(loaded.asRules(), rules);
  EXPECT_TRUE(loaded.pick(Collective::kAllReduce, 4, 1 << 20).trial);  // a size the table does not cover
  EXPECT_EQ(loaded.settledBuckets(), 0) << "loaded sizes are not counted as tuned here";
}

// Broadcast's and reduce's chain is "chain" in a table. A table that names it "ring" (as CHORUS_ALGO may) loads as
// the chain, and is written back under the chain's name.
TEST(AutotuneTableTest, ATableNamingTheChainRingLoadsAsTheChain) {
  AutotuneTable loaded(twoHosts(), AlgoRules(), kChunk);
  loaded.load(AlgoRules::parse("broadcast.32:64K-128K=ring;reduce.32:64K-128K=ring@128K"));
  for (Collective c : {Collective::kBroadcast, Collective::kReduce}) {
    const AutotuneTable::Pick p = loaded.pick(c, 4, 64 << 10);
    EXPECT_TRUE(p.tuned) << collectiveName(c);
    EXPECT_FALSE(p.trial) << collectiveName(c);
    EXPECT_EQ(p.candidate.algorithm, AlgorithmId::kChain) << collectiveName(c);
  }
  EXPECT_EQ(loaded.asRules(), "broadcast.32:64K-128K=chain;reduce.32:64K-128K=chain@128K");
}

// The tuner's candidates for broadcast are the registry's: the chain among them, under its own id.
TEST(AutotuneTableTest, BroadcastTriesTheChain) {
  AutotuneTable t(twoHosts(), AlgoRules(), kChunk);
  std::map<AlgorithmId, int> tried;
  const Timing chainFastest = [&](const TuneCandidate& c) {
    ++tried[c.algorithm];
    return c.algorithm == AlgorithmId::kChain ? 1.0 : 2.0;
  };
  ASSERT_GT(converge(t, Collective::kBroadcast, 4, 8 << 10, chainFastest), 0);
  EXPECT_GT(tried[AlgorithmId::kChain], 0);
  EXPECT_EQ(tried.count(AlgorithmId::kRing), 0u);
  EXPECT_EQ(t.pick(Collective::kBroadcast, 4, 8 << 10).candidate.algorithm, AlgorithmId::kChain);
  EXPECT_EQ(t.asRules(), "broadcast.32:8K-16K=chain");
}

}  // namespace
}  // namespace chorus
