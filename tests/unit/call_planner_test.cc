// The call planner: every setting that shapes a call is applied there, and read nowhere else in the library.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "algorithms/selection/call_planner.h"
#include "core/error.h"

namespace chorus {
namespace {

// Four ranks on two hosts.
struct World {
  World() {
    std::vector<RankPlacement> placements;
    for (int r = 0; r < 4; ++r) placements.push_back(RankPlacement{.rank = r, .hostId = r < 2 ? "a" : "b"});
    topology = std::make_unique<GlobalTopology>(placements);
  }
  PlannerWorld planner() const { return PlannerWorld{*topology, links}; }
  std::unique_ptr<GlobalTopology> topology;
  LinkModel links;
};

CallArgs allReduce(size_t count) {
  CallArgs op;
  op.collective = Collective::kAllReduce;
  op.count = count;
  op.type = chorusFloat32;
  op.reduction = chorusSum;
  return op;
}

// Host calls in slices of 256 KiB, device calls in slices of 4 MiB.
CommConfig hostAndDeviceSlices() {
  CommConfig config;
  config.chunkSize = 256 << 10;
  config.deviceChunkSize = 4 << 20;
  return config;
}

TEST(CallPlannerTest, HostAndDeviceCallsTakeTheirOwnSliceSize) {
  World w;
  const CommConfig config = hostAndDeviceSlices();
  CallPlanner planner(0, config, w.planner());
  const CallPlan host = planner.plan(allReduce(1 << 20), 4, false);
  EXPECT_EQ(host.sliceBytes, size_t{256} << 10);
  EXPECT_EQ(host.stripeWidth, 0);
  EXPECT_FALSE(host.trial);
  EXPECT_NE(host.run, nullptr);
  EXPECT_EQ(planner.plan(allReduce(1 << 20), 4, true).sliceBytes, size_t{4} << 20);
}

// The planner keeps the last plan for calls of the same shape: a call of another shape (size, type, collective,
// ranks, host or device) is planned afresh, and gets what a fresh planner gives it.
TEST(CallPlannerTest, TheLastPlanIsReusedOnlyForTheSameShape) {
  World w;
  const CommConfig config = hostAndDeviceSlices();
  CallPlanner planner(0, config, w.planner());
  CallArgs doubles = allReduce(1 << 17);
  doubles.type = chorusFloat64;  // the same bytes as 1 << 18 floats
  CallArgs gather = allReduce(8);
  gather.collective = Collective::kAllGather;
  const std::vector<std::pair<CallArgs, int>> calls = {{allReduce(2), 4}, {allReduce(2), 4}, {allReduce(1 << 18), 4},
                                                       {allReduce(2), 4}, {allReduce(2), 2}, {doubles, 4},
                                                       {gather, 4},       {allReduce(8), 4}, {allReduce(1 << 22), 4}};
  for (bool device : {false, true}) {
    for (const auto& [op, nranks] : calls) {
      CallPlanner fresh(0, config, w.planner());
      const CallPlan want = fresh.plan(op, nranks, device);
      const CallPlan got = planner.plan(op, nranks, device);
      EXPECT_EQ(got.algorithm, want.algorithm) << countBytes(op) << " B over " << nranks;
      EXPECT_EQ(got.run, want.run);
      EXPECT_EQ(got.sliceBytes, want.sliceBytes);
      EXPECT_EQ(got.segmentBytes, want.segmentBytes);
      EXPECT_EQ(got.stripeWidth, want.stripeWidth);
    }
  }
}

// Where every rank shares memory, a call whose step spans more than one configured slice takes a slice no larger than
// keeps a rank's pipeline (two pools of its slots) in one core's cache; across hosts the configured slice stands.
TEST(CallPlannerTest, SharedMemoryCallsTakeASliceThatFitsACoresCache) {
  EXPECT_EQ(sharedMemorySlice(512 << 10, 1 << 20, 4), size_t{128} << 10);
  EXPECT_EQ(sharedMemorySlice(512 << 10, 2 << 20, 4), size_t{256} << 10);
  EXPECT_EQ(sharedMemorySlice(64 << 10, 2 << 20, 4), size_t{64} << 10);     // never above the configured slice
  EXPECT_EQ(sharedMemorySlice(512 << 10, 256 << 10, 4), size_t{64} << 10);  // nor below 64 KiB
  EXPECT_EQ(sharedMemorySlice(512 << 10, 0, 4), size_t{512} << 10);         // cache unknown
  std::vector<RankPlacement> oneHost;
  for (int r = 0; r < 4; ++r) oneHost.push_back(RankPlacement{.rank = r, .hostId = "a"});
  const GlobalTopology host(oneHost);
  const LinkModel links;
  PlannerWorld shm{host, links};
  shm.coreCacheBytes = 1 << 20;
  shm.pipelineSlots = 4;
  CommConfig config;
  EXPECT_EQ(CallPlanner(0, config, shm).plan(allReduce(1 << 22), 4, false).sliceBytes, size_t{128} << 10);
  EXPECT_EQ(CallPlanner(0, config, shm).plan(allReduce(1 << 22), 4, true).sliceBytes, config.deviceChunkSize);
  // 2 MiB over 4 ranks: a step of 512 KiB fits one configured slice.
  EXPECT_EQ(CallPlanner(0, config, shm).plan(allReduce(1 << 19), 4, false).sliceBytes, config.chunkSize);
  PlannerWorld loopbackTcp = shm;
  loopbackTcp.sameHostOverNetwork = true;
  EXPECT_EQ(CallPlanner(0, config, loopbackTcp).plan(allReduce(1 << 22), 4, false).sliceBytes, config.chunkSize);
  World hosts;
  PlannerWorld twoHosts = hosts.planner();
  twoHosts.coreCacheBytes = 1 << 20;
  twoHosts.pipelineSlots = 4;
  EXPECT_EQ(CallPlanner(0, config, twoHosts).plan(allReduce(1 << 22), 4, false).sliceBytes, config.chunkSize);
}

TEST(CallPlannerTest, ARuleSetsTheAlgorithmSliceAndStripeWidth) {
  World w;
  CommConfig config;
  config.algo = "allreduce.32:1M-2M=ring/2,4M-8M=ring@2M";
  CallPlanner planner(0, config, w.planner());
  const CallPlan striped = planner.plan(allReduce(1 << 18), 4, false);  // 1 MiB
  EXPECT_EQ(striped.algorithm, AlgorithmId::kRing);
  EXPECT_EQ(striped.stripeWidth, 2);
  EXPECT_EQ(striped.sliceBytes, config.chunkSize);
  const CallPlan sliced = planner.plan(allReduce(1 << 20), 4, false);  // 4 MiB
  EXPECT_EQ(sliced.algorithm, AlgorithmId::kRing);
  EXPECT_EQ(sliced.sliceBytes, size_t{2} << 20);
  EXPECT_EQ(CallPlanner::largestSlice(config), std::max(config.chunkSize, size_t{2} << 20));
}

TEST(CallPlannerTest, NetworkAllReducesRunInPiecesThatPostOneSliceAheadPerPeer) {
  const size_t slice = 512 << 10;
  EXPECT_EQ(segmentBytesFor(Collective::kAllReduce, AlgorithmId::kRing, 4, slice, true), 4 * slice);
  EXPECT_EQ(segmentBytesFor(Collective::kAllReduce, AlgorithmId::kHalvingDoubling, 4, slice, true), 2 * slice);
  EXPECT_EQ(segmentBytesFor(Collective::kAllReduce, AlgorithmId::kRecursiveDoubling, 4, slice, true), slice);
  EXPECT_EQ(segmentBytesFor(Collective::kAllReduce, AlgorithmId::kTree, 4, slice, true), 0u);
  EXPECT_EQ(segmentBytesFor(Collective::kAllReduce, AlgorithmId::kHierarchical, 4, slice, true), 0u);
  EXPECT_EQ(segmentBytesFor(Collective::kAllReduce, AlgorithmId::kRing, 4, slice, false), 0u);
  EXPECT_EQ(segmentBytesFor(Collective::kBroadcast, AlgorithmId::kChain, 4, slice, true), 0u);
  EXPECT_EQ(segmentBytesFor(Collective::kAllGather, AlgorithmId::kRing, 4, slice, true), 0u);

  World w;  // two hosts: the call crosses the network
  CommConfig config;
  config.chunkSize = 256 << 10;
  config.algo = "allreduce:0-inf=ring";
  CallPlanner planner(0, config, w.planner());
  EXPECT_EQ(planner.plan(allReduce(1 << 22), 4, false).segmentBytes, size_t{4} * (256 << 10));
  EXPECT_EQ(planner.plan(allReduce(1 << 22), 4, true).segmentBytes, 0u);  // device calls run whole
}

TEST(CallPlannerTest, BatchesFuseUpToTheThresholdOnHostMemoryOnly) {
  World w;
  CommConfig config;
  config.fusionThreshold = 1 << 20;
  CallPlanner planner(0, config, w.planner());
  const std::vector<CallArgs> ops = {allReduce(10), allReduce(20)};
  EXPECT_EQ(planner.planBatch(ops, false).fusionThreshold, size_t{1} << 20);
  EXPECT_EQ(planner.planBatch(ops, true).fusionThreshold, 0u);
}

TEST(CallPlannerTest, BadRulesAreRefusedBeforeAnyPlan) {
  CommConfig config;
  config.algo = "allreduce:=nonsense";
  EXPECT_THROW(CallPlanner::checkSettings(config), Error);
}

// The settings that shape how a call runs, as a library file would read them from a configuration.
const std::regex kCallSetting(R"(\b(config_?|c|r)\.(chunkSize|deviceChunkSize|fusionThreshold|algo|autotune)\b)");

// Where such a read is allowed outside the planner, and why.
const std::set<std::string> kAllowed = {
    "algorithms/selection/call_planner.cc",  // the one place that decides
    "src/api/config_arguments.cc",           // turns chorusConfig_t fields into CommConfig's (no decision)
    "transports/transport_registry.cc",      // opens the sockets the tuner may choose from (connection setup)
};

TEST(CallPlannerTest, OnlyThePlannerReadsTheSettingsThatShapeACall) {
  namespace fs = std::filesystem;
  std::vector<std::string> offenders;
  int scanned = 0;
  for (const char* folder : {"src", "algorithms", "transports", "device", "topology", "reduce"}) {
    for (const auto& entry : fs::recursive_directory_iterator(fs::path(CHORUS_SOURCE_DIR) / folder)) {
      const std::string ext = entry.path().extension().string();
      if (!entry.is_regular_file() || (ext != ".cc" && ext != ".h")) continue;
      const std::string relative = fs::relative(entry.path(), CHORUS_SOURCE_DIR).string();
      ++scanned;
      if (kAllowed.count(relative) != 0) continue;
      std::ifstream f(entry.path());
      std::stringstream text;
      text << f.rdbuf();
      const std::string s = text.str();
      for (auto it = std::sregex_iterator(s.begin(), s.end(), kCallSetting); it != std::sregex_iterator(); ++it) {
        offenders.push_back(relative + ": " + it->str());
      }
    }
  }
  EXPECT_GT(scanned, 100) << "the library's sources were not found under " << CHORUS_SOURCE_DIR;
  EXPECT_TRUE(offenders.empty()) << "read outside algorithms/selection/call_planner.cc:\n"
                                 << ::testing::PrintToString(offenders);
}

}  // namespace
}  // namespace chorus
