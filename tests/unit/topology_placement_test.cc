// Rank placements on peer cards (including hostile values), host identity override, detection and its cache.
#include <gtest/gtest.h>
#include <sched.h>
#include <stdlib.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "tests/harness/scoped_env.h"
#include "tests/unit/topology_test_support.h"
#include "topology/cpu_list.h"
#include "topology/global_topology.h"
#include "topology/host_identity.h"
#include "topology/local_host.h"
#include "topology/rank_placement.h"
#include "topology/topology_detector.h"
#include "topology/topology_json.h"

namespace chorus {
namespace {

using topology_test::kDataDir;

// A card that went through the wire format (PeerCard::encode/decode), as a peer's would.
PeerCard overTheWire(const PeerCard& card) { return PeerCard::decode(card.encode(), card.rank); }

TEST(RankPlacementTest, RoundTripsThroughAPeerCard) {
  RankPlacement p;
  p.rank = 3;
  p.hostId = "node7";
  p.numaNode = 1;
  p.cpu = 42;
  p.bound = true;
  p.gpu = 1;
  p.hostNumaNodes = 2;
  p.hostGpus = 2;
  p.hostCores = 32;
  p.hostRdma = true;
  PeerCard card;
  card.rank = 3;
  card.hostId = "node7";
  card.entries["tcp.addr"] = "10.0.0.1:5000";
  addPlacement(card, p);
  PeerCard received = overTheWire(card);
  EXPECT_EQ(placementFromCard(received), p);
  EXPECT_EQ(received.entries.at("tcp.addr"), "10.0.0.1:5000");
}

TEST(RankPlacementTest, MissingKeysGiveDefaults) {
  PeerCard card;
  card.rank = 2;
  card.hostId = "h";
  RankPlacement p = placementFromCard(card);
  EXPECT_EQ(p.rank, 2);
  EXPECT_EQ(p.hostId, "h");
  EXPECT_EQ(p.numaNode, -1);
  EXPECT_EQ(p.gpu, -1);
  EXPECT_EQ(p.hostNumaNodes, 1);
  EXPECT_FALSE(p.hostRdma);
}

TEST(RankPlacementTest, HostileValuesAreRefusedNamingRankKeyAndValue) {
  struct Case {
    const char* key;
    std::string value;
  };
  const std::vector<Case> cases = {
      {"topo.numa", "-2"},
      {"topo.numa", "4096"},
      {"topo.numa", "99999999999999999999999"},
      {"topo.numa", "abc"},
      {"topo.numa", ""},
      {"topo.numa", " 1"},
      {"topo.numa", "1 "},
      {"topo.numa", "+1"},
      {"topo.numa", "0x10"},
      {"topo.numa", "1e3"},
      {"topo.cpu", "65536"},
      {"topo.cpu", "-7"},
      {"topo.bound", "2"},
      {"topo.bound", "yes"},
      {"topo.gpu", "-5"},
      {"topo.gpu", "1024"},
      {"topo.numas", "0"},
      {"topo.gpus", "-1"},
      {"topo.cores", "2147483648"},
      {"topo.rdma", "-1"},
      {"topo.numa", std::string("1\0", 2)},
      {"topo.gpus", std::string(4000, '9')},
  };
  for (const Case& c : cases) {
    PeerCard card;
    card.rank = 5;
    card.hostId = "h";
    card.entries[c.key] = c.value;
    try {
      placementFromCard(overTheWire(card));
      ADD_FAILURE() << c.key << "='" << c.value << "' was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), chorusRemoteError);
      std::string what = e.what();
      EXPECT_NE(what.find("peer card of rank 5: " + std::string(c.key) + "='"), std::string::npos) << what;
      EXPECT_NE(what.find("is not an integer in ["), std::string::npos) << what;
      EXPECT_LT(what.size(), 200u) << "a huge value must not be copied into the message";
    }
  }
}

TEST(RankPlacementTest, GpuBeyondTheHostsGpusIsRefused) {
  PeerCard card;
  card.rank = 1;
  card.entries["topo.gpu"] = "2";
  card.entries["topo.gpus"] = "2";
  try {
    placementFromCard(card);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("topo.gpu=2 but its host has 2 GPUs"), std::string::npos) << e.what();
  }
}

TEST(RankPlacementTest, LocalPlacementFollowsTheAffinity) {
  HostTopology two = loadTopologyFile(kDataDir + "two_socket_2gpu_2nic.json");
  test::ScopedEnv localRank("CHORUS_LOCAL_RANK", "3");
  RankPlacement p = localPlacement(4, "me", two);
  EXPECT_EQ(p.rank, 4);
  EXPECT_EQ(p.hostId, "me");
  EXPECT_EQ(p.hostNumaNodes, 2);
  EXPECT_EQ(p.hostGpus, 2);
  EXPECT_EQ(p.hostCores, 32);
  EXPECT_TRUE(p.hostRdma);
  EXPECT_EQ(p.gpu, 1);  // local rank 3 of 2 GPUs
  EXPECT_GE(p.cpu, 0);
  // This machine's CPUs are 0..n-1, within node 0 of the example as long as n <= 16.
  if (p.cpu < 16) {
    EXPECT_EQ(p.numaNode, 0);
  }

  // Bound to one CPU: the node holding it, and bound.
  cpu_set_t saved;
  ASSERT_EQ(sched_getaffinity(0, sizeof(saved), &saved), 0);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(0, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  RankPlacement pinned = localPlacement(0, "me", two);
  ASSERT_EQ(sched_setaffinity(0, sizeof(saved), &saved), 0);
  EXPECT_TRUE(pinned.bound);
  EXPECT_EQ(pinned.numaNode, 0);
  EXPECT_EQ(pinned.cpu, 0);

  test::ScopedEnv noLocalRank("CHORUS_LOCAL_RANK", "junk");
  EXPECT_EQ(localPlacement(0, "me", two).gpu, -1);
}

TEST(RankPlacementTest, AddPlacementFromTheDetectedHost) {
  PeerCard card;
  card.rank = 0;
  card.hostId = hostIdentity();
  addPlacement(card, detectHostTopology());
  RankPlacement p = placementFromCard(overTheWire(card));
  EXPECT_GE(p.numaNode, 0);
  EXPECT_GE(p.cpu, 0);
  EXPECT_GE(p.hostCores, 1);
  EXPECT_EQ(p.hostId, card.hostId);
}

TEST(HostIdentityTest, ChorusHostIdOverridesHostnameAndBootId) {
  {
    test::ScopedEnv unset("CHORUS_HOST_ID", std::nullopt);
    std::string real = hostIdentity();
    EXPECT_NE(real.find('/'), std::string::npos) << real;
    EXPECT_EQ(real, hostIdentity());
  }
  {
    test::ScopedEnv set("CHORUS_HOST_ID", "rack3-node12#h1");
    EXPECT_EQ(hostIdentity(), "rack3-node12#h1");
  }
  {
    test::ScopedEnv tooLong("CHORUS_HOST_ID", std::string(kMaxHostIdBytes + 1, 'x'));
    EXPECT_THROW(hostIdentity(), Error);
  }
  {
    test::ScopedEnv control("CHORUS_HOST_ID", "a\tb");
    EXPECT_THROW(hostIdentity(), Error);
  }
}

TEST(TopologyDetectionTest, FindsThisMachinesCpus) {
  auto start = std::chrono::steady_clock::now();
  HostTopology t = detectHostTopology();
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  EXPECT_FALSE(isFallbackTopology(t)) << t.source;
  EXPECT_EQ(t.source.rfind("hwloc ", 0), 0u) << t.source;
  // Every CPU this process may use (a container may restrict them) is in a NUMA node and a package.
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
  EXPECT_GE(t.hardwareThreads(), CPU_COUNT(&allowed));
  EXPECT_LE(t.hardwareThreads(), sysconf(_SC_NPROCESSORS_CONF));
  EXPECT_GE(t.cores(), 1);
  EXPECT_LE(t.cores(), t.hardwareThreads());
  ASSERT_FALSE(t.numaNodes.empty());
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) {
      EXPECT_GE(t.numaNodeOfCpu(cpu), 0) << "CPU " << cpu;
    }
  }
  uint64_t memory = 0;
  for (const NumaNode& n : t.numaNodes) memory += n.memoryBytes;
  EXPECT_GT(memory, 64ULL << 20);
  EXPECT_LT(ms, 2000) << "detection is meant to cost tens of milliseconds";
}

// hwloc's synthetic topologies stand in for machines this one is not: 2 packages, each with a DRAM node holding
// its CPUs and a memory-only (HBM-like) node that hwloc gives the same CPUs; Linux puts each CPU in one node.
TEST(TopologyDetectionTest, TwoSocketsWithMemoryOnlyNodes) {
  test::ScopedEnv synthetic("HWLOC_SYNTHETIC",
                            "pack:2 [numa(memory=1073741824)] [numa(memory=2147483648)] l3:1(size=33554432) core:4 "
                            "l2:1(size=1048576) l1d:1(size=32768) pu:2");
  HostTopology t = detectHostTopology();
  ASSERT_FALSE(isFallbackTopology(t)) << t.source;
  ASSERT_EQ(t.packages.size(), 2u);
  EXPECT_EQ(t.packages[1].cpus, (std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(t.cores(), 8);
  EXPECT_EQ(t.hardwareThreads(), 16);
  ASSERT_EQ(t.numaNodes.size(), 4u);
  EXPECT_EQ(t.numaNodes[0].cpus.size(), 8u);
  EXPECT_EQ(t.numaNodes[0].cores, 4);
  EXPECT_EQ(t.numaNodes[0].memoryBytes, 1ULL << 30);
  EXPECT_TRUE(t.numaNodes[1].cpus.empty());
  EXPECT_EQ(t.numaNodes[1].memoryBytes, 2ULL << 30);
  EXPECT_EQ(t.numaNodeOfCpu(12), t.numaNodes[2].id);
  EXPECT_EQ(t.packageOfNuma(t.numaNodes[2].id), t.packages[1].id);
  EXPECT_EQ(t.caches, (std::vector<CacheGroup>{{1, 32768, 8}, {2, 1 << 20, 8}, {3, 32 << 20, 2}}));
  EXPECT_EQ(parseTopologyJson(topologyToJson(t)), t);

  // Ranks of an emulated host like this one use the two nodes with CPUs, by their ids.
  EmulatedHostShape shape = EmulatedHostShape::of(t);
  EXPECT_EQ(shape.numaIds, (std::vector<int>{t.numaNodes[0].id, t.numaNodes[2].id}));
  GlobalTopology world = GlobalTopology::emulated(4, 1, shape);
  EXPECT_EQ(world.placement(3).numaNode, t.numaNodes[2].id);
  EXPECT_EQ(world.linkBetween(1, 2), LinkClass::kCrossNuma);
}

TEST(TopologyDetectionTest, CachedOncePerProcessAndTheFileWins) {
  const HostTopology& first = localHostTopology();
  EXPECT_EQ(&first, &localHostTopology());
  test::ScopedEnv file("CHORUS_TOPO_FILE", kDataDir + "flat_vm.json");
  EXPECT_EQ(loadLocalHostTopology().hostname, "vm-8");  // uncached: reads the file
  EXPECT_EQ(&first, &localHostTopology());              // cached: unchanged
  test::ScopedEnv broken("CHORUS_TOPO_FILE", kDataDir + "does_not_exist.json");
  EXPECT_THROW(loadLocalHostTopology(), Error);
}

TEST(CpuListTest, ParsesAndFormatsLinuxLists) {
  std::vector<int> cpus;
  std::string why;
  ASSERT_TRUE(parseCpuList("0-3,8,10-11", &cpus, &why)) << why;
  EXPECT_EQ(cpus, (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(formatCpuList(cpus), "0-3,8,10-11");
  ASSERT_TRUE(parseCpuList("5,1", &cpus, &why));
  EXPECT_EQ(cpus, (std::vector<int>{1, 5}));
  ASSERT_TRUE(parseCpuList("", &cpus, &why));
  EXPECT_TRUE(cpus.empty());
  EXPECT_EQ(formatCpuList({}), "");
  for (const char* bad : {"-1", "1-", ",", "1,,2", "a", "3-1", "0-65536", "1,1", " 1", "1 ", "0x1"}) {
    EXPECT_FALSE(parseCpuList(bad, &cpus, &why)) << bad;
    EXPECT_FALSE(why.empty()) << bad;
  }
  ASSERT_TRUE(parseCpuList("0-65535", &cpus, &why));
  EXPECT_EQ(cpus.size(), 65536u);
}

}  // namespace
}  // namespace chorus
