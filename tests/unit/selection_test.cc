// CHORUS_ALGO rules, the selector and the decision table on synthetic worlds.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "algorithms/algorithms.h"
#include "algorithms/selection/algo_rules.h"
#include "algorithms/selection/cost_model.h"
#include "algorithms/selection/decision_table.h"
#include "algorithms/selection/world_costs.h"
#include "algorithms/selector.h"
#include "core/error.h"
#include "tests/unit/cost_model_worlds.h"

namespace chorus {
namespace {

using test::labTwoByTwo;
using test::oneHost;

std::string parseError(const std::string& text) {
  try {
    AlgoRules::parse(text);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), chorusInvalidArgument);
    return e.what();
  }
  return "";
}

// The algorithm the rules choose (none where no rule applies).
std::optional<AlgorithmId> chosen(const AlgoRules& r, Collective c, size_t bytes, int elementBytes = 0) {
  const std::optional<AlgoRule> rule = r.lookup(c, bytes, elementBytes);
  return rule ? std::optional<AlgorithmId>(rule->algorithm) : std::nullopt;
}

TEST(AlgoRulesTest, PlainNameAppliesWhereTheAlgorithmExists) {
  AlgoRules r = AlgoRules::parse("recursive_doubling");
  EXPECT_EQ(chosen(r, Collective::kAllReduce, 0), AlgorithmId::kRecursiveDoubling);
  EXPECT_EQ(chosen(r, Collective::kAllReduce, size_t{1} << 40), AlgorithmId::kRecursiveDoubling);
  // Broadcast has no recursive doubling: the model decides.
  EXPECT_EQ(chosen(r, Collective::kBroadcast, 8), std::nullopt);
}

TEST(AlgoRulesTest, RangesPerCollectiveAndLaterRulesWin) {
  AlgoRules r = AlgoRules::parse(" allreduce:0-64K=recursive_doubling, 64K-inf=ring ; broadcast:hierarchical;ring");
  EXPECT_EQ(chosen(r, Collective::kBroadcast, 100), AlgorithmId::kChain);  // the trailing catch-all overrides
  AlgoRules s = AlgoRules::parse("ring;allreduce:0-64K=recursive_doubling;broadcast:hierarchical");
  EXPECT_EQ(chosen(s, Collective::kAllReduce, 65535), AlgorithmId::kRecursiveDoubling);
  EXPECT_EQ(chosen(s, Collective::kAllReduce, 65536), AlgorithmId::kRing);
  EXPECT_EQ(chosen(s, Collective::kBroadcast, 1), AlgorithmId::kHierarchical);
  EXPECT_EQ(chosen(s, Collective::kAllGather, 1), AlgorithmId::kRing);
  EXPECT_TRUE(AlgoRules::parse("").empty());
  EXPECT_TRUE(AlgoRules::parse(" ; ").empty());
}

TEST(AlgoRulesTest, WidthsAndSlicesApplyPerCall) {
  AlgoRules r = AlgoRules::parse("allreduce:0-inf=ring;allreduce.16:1M-inf=tree@2M;broadcast:tree@64K");
  EXPECT_TRUE(r.perCall());
  EXPECT_FALSE(AlgoRules::parse("allreduce:0-64K=ring").perCall());
  // Width 0 (unknown): only the rules for every width.
  EXPECT_EQ(chosen(r, Collective::kAllReduce, 4 << 20), AlgorithmId::kRing);
  EXPECT_EQ(chosen(r, Collective::kAllReduce, 4 << 20, 4), AlgorithmId::kRing);
  const std::optional<AlgoRule> half = r.lookup(Collective::kAllReduce, 4 << 20, 2);
  ASSERT_TRUE(half);
  EXPECT_EQ(half->algorithm, AlgorithmId::kTree);
  EXPECT_EQ(half->sliceBytes, size_t{2} << 20);
  EXPECT_EQ(chosen(r, Collective::kAllReduce, 1000, 2), AlgorithmId::kRing);  // below the 16-bit rule's range
  EXPECT_EQ(r.lookup(Collective::kBroadcast, 8)->sliceBytes, size_t{64} << 10);
  EXPECT_EQ(r.lookup(Collective::kAllReduce, 8)->sliceBytes, 0u);
  EXPECT_NE(parseError("allreduce.12:ring").find("element width"), std::string::npos);
  EXPECT_NE(parseError("allreduce:ring@1K").find("slice size out of range"), std::string::npos);
  EXPECT_NE(parseError("allreduce:ring@").find("expected a size"), std::string::npos);
}

TEST(AlgoRulesTest, SocketsPerRailApplyPerCall) {
  AlgoRules r = AlgoRules::parse("allreduce:256K-4M=ring@2M/2;broadcast:tree/4");
  EXPECT_TRUE(r.perCall());
  const std::optional<AlgoRule> a = r.lookup(Collective::kAllReduce, 1 << 20);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->algorithm, AlgorithmId::kRing);
  EXPECT_EQ(a->sliceBytes, size_t{2} << 20);
  EXPECT_EQ(a->sockets, 2);
  EXPECT_EQ(r.lookup(Collective::kBroadcast, 8)->sockets, 4);
  EXPECT_TRUE(AlgoRules::parse("allreduce:ring/1").perCall());
  for (const char* bad : {"allreduce:ring/0", "allreduce:ring/17", "allreduce:ring/x", "allreduce:ring/"}) {
    EXPECT_NE(parseError(bad).find("sockets per rail after '/' must be 1..16"), std::string::npos) << bad;
  }
}

TEST(AlgoRulesTest, BadStringsSayWhatIsWrong) {
  EXPECT_NE(parseError("no_such_algorithm").find("'no_such_algorithm': not an algorithm name"), std::string::npos);
  EXPECT_NE(parseError("allreduce:0-64K").find("expected lo-hi=algorithm"), std::string::npos)
      << parseError("allreduce:0-64K");
  EXPECT_NE(parseError("alltoal:ring").find("not a collective"), std::string::npos);
  EXPECT_NE(parseError("alltoall:ring").find("no algorithm 'ring' for alltoall"), std::string::npos)
      << parseError("alltoall:ring");
  EXPECT_NE(parseError("allgather:0-inf=hierarchical").find("no algorithm 'hierarchical' for allgather (it has ring"),
            std::string::npos)
      << parseError("allgather:0-inf=hierarchical");
  EXPECT_NE(parseError("allreduce:64K-0=ring").find("empty size range"), std::string::npos);
  EXPECT_NE(parseError("allreduce:1X-2=ring").find("unknown size suffix"), std::string::npos);
  EXPECT_NE(parseError("allreduce:a-2=ring").find("expected a size"), std::string::npos);
  EXPECT_NE(parseError("allreduce:99999999999999999999-inf=ring").find("too large"), std::string::npos);
  EXPECT_NE(parseError("allreduce:ring,").find("empty range"), std::string::npos);
  EXPECT_EQ(parseError("allreduce:0-64K=ring"), "");
}

TEST(AlgoRulesTest, SizesFormatShortestExact) {
  EXPECT_EQ(formatSize(0), "0");
  EXPECT_EQ(formatSize(1000), "1000");
  EXPECT_EQ(formatSize(65536), "64K");
  EXPECT_EQ(formatSize(3 << 20), "3M");
  EXPECT_EQ(formatSize(size_t{1} << 30), "1G");
  EXPECT_EQ(formatSize(SIZE_MAX), "inf");
}

// The leaders of a two-level allreduce run what the model priced them at: on crowded hosts each of their steps waits
// for the scheduler, so at 2 hosts x 2 on one core each, 4 KiB, they exchange once (recursive doubling) rather than
// in a ring's two steps, whose price at the link's rate alone is a hair under. With the ring's steps the lab's call
// takes twice as long (docs/cost_model.md, "Two-level collectives").
TEST(SelectorTest, AnAllReducesLeadersAreChosenAsTheyArePriced) {
  CostInputs in = labTwoByTwo();
  in.interHost = {12.0, 0.12, 125000, 1.9, 1448, 2.0};
  in.contextSwitchUs = 10.5;
  const Selector selector("", in);
  CallArgs op;
  op.count = 1024;  // 4 KiB of floats
  EXPECT_EQ(selector.chooseLevel(op, 2, true).id, AlgorithmId::kRecursiveDoubling);
  const CostInputs leaders = leaderLevel(in, Collective::kAllReduce);
  EXPECT_EQ(leaders.nranks, 2);
  EXPECT_DOUBLE_EQ(leaders.interHost.latencyUs, 12.0 + 10.5);
  EXPECT_DOUBLE_EQ(leaderLevel(in, Collective::kBroadcast).interHost.latencyUs, 12.0);
}

TEST(DecisionTableTest, CoversEverySizeOnceAndRoundTripsThroughRules) {
  CostInputs in = oneHost(8);
  DecisionTable t(in, AlgoRules{});
  for (Collective c : {Collective::kAllReduce, Collective::kBroadcast, Collective::kReduce, Collective::kAllGather,
                       Collective::kReduceScatter}) {
    size_t expectLo = 0;
    for (const auto& row : t.rows()) {
      if (row.collective != c) continue;
      EXPECT_EQ(row.lo, expectLo) << collectiveName(c);
      EXPECT_NE(row.run, nullptr);
      EXPECT_FALSE(row.forced);
      expectLo = row.hi;
    }
    EXPECT_EQ(expectLo, SIZE_MAX) << collectiveName(c);
  }
  EXPECT_EQ(t.lookup(Collective::kAllReduce, 8).algorithm, AlgorithmId::kRecursiveDoubling);
  EXPECT_NE(t.lookup(Collective::kAllReduce, 256 << 20).algorithm,
            AlgorithmId::kRecursiveDoubling);  // a bandwidth algorithm
  // The defaults printed as CHORUS_ALGO reproduce themselves when fed back.
  DecisionTable again(in, AlgoRules::parse(t.asRules()));
  for (size_t bytes : {size_t{0}, size_t{7}, size_t{4096}, size_t{1} << 20, size_t{3} << 30}) {
    EXPECT_EQ(again.lookup(Collective::kAllReduce, bytes).algorithm, t.lookup(Collective::kAllReduce, bytes).algorithm);
    EXPECT_TRUE(again.lookup(Collective::kAllReduce, bytes).forced);
  }
  std::ostringstream printed;
  t.print(printed);
  EXPECT_NE(printed.str().find("allreduce"), std::string::npos);
  EXPECT_NE(printed.str().find("recursive_doubling"), std::string::npos);
}

TEST(DecisionTableTest, RulesOverrideOnlyWhereTheyApply) {
  DecisionTable t(oneHost(4), AlgoRules::parse("allreduce:1M-inf=recursive_doubling"));
  EXPECT_EQ(t.lookup(Collective::kAllReduce, 2 << 20).algorithm, AlgorithmId::kRecursiveDoubling);
  EXPECT_TRUE(t.lookup(Collective::kAllReduce, 2 << 20).forced);
  EXPECT_FALSE(t.lookup(Collective::kAllReduce, 1000).forced);
  EXPECT_FALSE(t.lookup(Collective::kBroadcast, 2 << 20).forced);
}

// Broadcast and reduce pipeline along a chain, an algorithm of its own: the model prices and chooses it under its
// own id, the tables print it as "chain", and the ring's id has no broadcast or reduce.
TEST(DecisionTableTest, BroadcastAndReduceChooseTheChain) {
  const CostInputs in = oneHost(8);
  const DecisionTable t(in, AlgoRules{});
  for (Collective c : {Collective::kBroadcast, Collective::kReduce}) {
    EXPECT_EQ(findAlgorithm(c, AlgorithmId::kRing), nullptr) << collectiveName(c);
    EXPECT_TRUE(std::isinf(predictUs(c, AlgorithmId::kRing, 8, in))) << collectiveName(c);
    EXPECT_EQ(t.lookup(c, 8).algorithm, AlgorithmId::kChain) << collectiveName(c);
  }
  EXPECT_EQ(findAlgorithm(Collective::kBroadcast, AlgorithmId::kChain)->run, &chainBroadcast);
  EXPECT_EQ(findAlgorithm(Collective::kReduce, AlgorithmId::kChain)->run, &chainReduce);
  EXPECT_STREQ(algorithmName(AlgorithmId::kChain), "chain");
  EXPECT_EQ(algorithmNamed("chain"), AlgorithmId::kChain);
  EXPECT_NE(t.asRules().find("broadcast:0-"), std::string::npos);
  EXPECT_NE(t.asRules().find("=chain"), std::string::npos) << t.asRules();
}

// CHORUS_ALGO=chain forces the chain; "ring", NCCL's name for it, does too where a collective has a chain and no
// ring, bare or per collective, through the table and through per-call rules alike. "chain" leaves the collectives
// that have no chain to the model.
TEST(SelectorTest, ChainAndRingBothForceTheChainOnBroadcastAndReduce) {
  const CostInputs in = oneHost(8);
  for (const char* algo : {"chain", "ring", "broadcast:ring;reduce:ring", "broadcast.32:chain;reduce.32:ring@64K"}) {
    const Selector selector(algo, in);
    for (Collective c : {Collective::kBroadcast, Collective::kReduce}) {
      CallArgs op;
      op.collective = c;
      op.count = 1 << 20;  // 4 MiB of floats
      const AlgorithmChoice choice = selector.choose(op, 8);
      EXPECT_EQ(choice.id, AlgorithmId::kChain) << algo << ", " << collectiveName(c);
      EXPECT_EQ(choice.run, findAlgorithm(c, AlgorithmId::kChain)->run) << algo << ", " << collectiveName(c);
    }
  }
  CallArgs allReduce;
  allReduce.count = 1 << 20;
  EXPECT_EQ(Selector("ring", in).choose(allReduce, 8).id, AlgorithmId::kRing);
  EXPECT_FALSE(Selector("chain", in).table().lookup(Collective::kAllReduce, 4 << 20).forced);
  EXPECT_TRUE(Selector("chain", in).table().lookup(Collective::kBroadcast, 4 << 20).forced);
  EXPECT_NE(parseError("allreduce:chain").find("no algorithm 'chain' for allreduce (it has ring"), std::string::npos)
      << parseError("allreduce:chain");
}

// A topology file's racks reach the runtime selection. 4 hosts of one rank at 1 Gbit/s in 2 racks with a 1 Gbit/s
// uplink each (perf/labs/two_racks.json): halving-doubling's far steps put two flows on each uplink (the lab
// measured 0.06 GB/s at 16 MiB against the ring's 0.12, one flow per uplink direction), so the ring must win there.
TEST(DecisionTableTest, RacksFromTheTopologyFileSteerTheSelection) {
  std::vector<RankPlacement> placements;
  for (int r = 0; r < 4; ++r) {
    std::string host = "h";  // not "h" + to_string: GCC 12's -Wrestrict misfires on it (its bug 105329)
    host += std::to_string(r);
    placements.push_back(RankPlacement{.rank = r, .hostId = host});
  }
  const GlobalTopology world(placements);
  LinkModel links;
  links.set(LinkClass::kNetwork, {20, 0.119}, LinkSource::kFile);
  const CostInputs oneSwitch = costInputsFor(world, links, false, 512 << 10);
  EXPECT_EQ(oneSwitch.hostsPerRack, 0);
  links.setFabric({2, 0.119});
  const CostInputs racks = costInputsFor(world, links, false, 512 << 10);
  EXPECT_EQ(racks.hostsPerRack, 2);
  EXPECT_DOUBLE_EQ(racks.rackUplinkGBs, 0.119);
  const size_t big = 16 << 20;
  EXPECT_GT(predictUs(Collective::kAllReduce, AlgorithmId::kHalvingDoubling, big, racks),
            1.5 * predictUs(Collective::kAllReduce, AlgorithmId::kHalvingDoubling, big, oneSwitch));
  EXPECT_EQ(DecisionTable(racks, {}).lookup(Collective::kAllReduce, big).algorithm, AlgorithmId::kRing);
  // Two hosts fill one rack: no uplink on the way.
  const GlobalTopology pair(std::vector<RankPlacement>(placements.begin(), placements.begin() + 2));
  EXPECT_EQ(costInputsFor(pair, links, false, 512 << 10).hostsPerRack, 0);
  EXPECT_THROW(links.setFabric({2, 0}), Error);
}

}  // namespace
}  // namespace chorus
