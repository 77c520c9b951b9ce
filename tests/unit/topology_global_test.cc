// GlobalTopology: grouping into hosts and NUMA nodes, leaders, link classes; the emulated splits; the link model.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"
#include "topology/global_topology.h"
#include "topology/host_blocks.h"
#include "topology/link_model.h"
#include "topology/topology_description.h"
#include "tests/unit/topology_test_support.h"

namespace chorus {
namespace {

using Ranks = std::vector<int>;

using topology_test::at;

TEST(HostBlocksTest, ContiguousBlocksLargerFirst) {
  // 5 ranks on 2 hosts: 0-2 and 3-4.
  EXPECT_EQ(emulatedHostBlock(0, 5, 2).firstRank, 0);
  EXPECT_EQ(emulatedHostBlock(0, 5, 2).ranks, 3);
  EXPECT_EQ(emulatedHostBlock(1, 5, 2).firstRank, 3);
  EXPECT_EQ(emulatedHostBlock(1, 5, 2).ranks, 2);
  for (int n = 1; n <= 17; ++n) {
    for (int h = 1; h <= n; ++h) {
      int next = 0;
      for (int host = 0; host < h; ++host) {
        HostBlock b = emulatedHostBlock(host, n, h);
        EXPECT_EQ(b.firstRank, next) << n << " ranks, " << h << " hosts, host " << host;
        EXPECT_TRUE(b.ranks == n / h || b.ranks == n / h + 1);
        EXPECT_EQ(b.ranks, n / h + (host < n % h ? 1 : 0));
        for (int r = b.firstRank; r < b.firstRank + b.ranks; ++r) {
          EXPECT_EQ(emulatedHostOf(r, n, h), host);
          EXPECT_EQ(emulatedLocalRank(r, n, h), r - b.firstRank);
        }
        next += b.ranks;
      }
      EXPECT_EQ(next, n);
    }
  }
  EXPECT_THROW(emulatedHostBlock(0, 2, 3), Error);
  EXPECT_THROW(emulatedHostBlock(2, 4, 2), Error);
  EXPECT_THROW(emulatedHostOf(4, 4, 2), Error);
  EXPECT_THROW(emulatedHostOf(0, 0, 1), Error);
}

TEST(GlobalTopologyTest, HostsAreNumberedByTheirLowestRank) {
  // Ranks interleaved over hosts, placements handed over in shuffled order.
  GlobalTopology g({at(3, "b"), at(0, "b"), at(2, "a"), at(1, "c"), at(4, "a")});
  EXPECT_EQ(g.nranks(), 5);
  ASSERT_EQ(g.nhosts(), 3);
  EXPECT_EQ(g.hostId(0), "b");
  EXPECT_EQ(g.hostId(1), "c");
  EXPECT_EQ(g.hostId(2), "a");
  EXPECT_EQ(g.ranksOnHost(0), (Ranks{0, 3}));
  EXPECT_EQ(g.ranksOnHost(1), (Ranks{1}));
  EXPECT_EQ(g.ranksOnHost(2), (Ranks{2, 4}));
  EXPECT_EQ(g.leaders(), (Ranks{0, 1, 2}));
  EXPECT_EQ(g.hostOf(4), 2);
  EXPECT_EQ(g.localRanks(4), (Ranks{2, 4}));
  EXPECT_EQ(g.localIndex(4), 1);
  EXPECT_EQ(g.localIndex(1), 0);
  EXPECT_EQ(g.maxRanksPerHost(), 2);
  EXPECT_EQ(g.minRanksPerHost(), 1);
  EXPECT_FALSE(g.evenHosts());
}

TEST(GlobalTopologyTest, RejectsPlacementsThatAreNotEveryRankOnce) {
  EXPECT_THROW(GlobalTopology({}), Error);
  EXPECT_THROW(GlobalTopology({at(0, "a"), at(0, "a")}), Error);
  EXPECT_THROW(GlobalTopology({at(0, "a"), at(2, "a")}), Error);
  EXPECT_THROW(GlobalTopology({at(-1, "a")}), Error);
}

TEST(GlobalTopologyTest, EvenEmulatedSplit) {
  GlobalTopology g = GlobalTopology::emulated(8, 2);
  EXPECT_EQ(g.nhosts(), 2);
  EXPECT_EQ(g.ranksOnHost(0), (Ranks{0, 1, 2, 3}));
  EXPECT_EQ(g.ranksOnHost(1), (Ranks{4, 5, 6, 7}));
  EXPECT_EQ(g.leaders(), (Ranks{0, 4}));
  EXPECT_EQ(g.hostId(1), "emulated#h1");
  EXPECT_TRUE(g.evenHosts());
  EXPECT_EQ(g.maxRanksPerHost(), 4);
  EXPECT_EQ(g.localRanks(6), (Ranks{4, 5, 6, 7}));
  EXPECT_EQ(g.localIndex(6), 2);
}

TEST(GlobalTopologyTest, UnevenEmulatedSplitMatchesChorusrun) {
  GlobalTopology g = GlobalTopology::emulated(5, 2);
  EXPECT_EQ(g.ranksOnHost(0), (Ranks{0, 1, 2}));
  EXPECT_EQ(g.ranksOnHost(1), (Ranks{3, 4}));
  EXPECT_EQ(g.leaders(), (Ranks{0, 3}));
  EXPECT_EQ(g.maxRanksPerHost(), 3);
  EXPECT_EQ(g.minRanksPerHost(), 2);
  GlobalTopology seven = GlobalTopology::emulated(7, 3);  // 3 + 2 + 2
  EXPECT_EQ(seven.leaders(), (Ranks{0, 3, 5}));
  EXPECT_THROW(GlobalTopology::emulated(2, 3), Error);
  EXPECT_THROW(GlobalTopology::emulated(4, 0), Error);
  GlobalTopology single = GlobalTopology::emulated(1, 1);
  EXPECT_EQ(single.nhosts(), 1);
  EXPECT_TRUE(single.linkClassesPresent().empty());
}

TEST(GlobalTopologyTest, EmulatedNumaNodesAndGpusFollowBlocks) {
  EmulatedHostShape shape;
  shape.numaNodes = 2;
  shape.gpus = 2;
  GlobalTopology g = GlobalTopology::emulated(8, 2, shape);
  // Per host: ranks 0,1 on node 0 + GPU 0; ranks 2,3 on node 1 + GPU 1.
  EXPECT_EQ(g.placement(1).numaNode, 0);
  EXPECT_EQ(g.placement(2).numaNode, 1);
  EXPECT_EQ(g.placement(5).numaNode, 0);
  EXPECT_EQ(g.placement(1).gpu, 0);
  EXPECT_EQ(g.placement(3).gpu, 1);
  EXPECT_EQ(g.ranksSharingNuma(1), (Ranks{0, 1}));
  EXPECT_EQ(g.ranksSharingNuma(6), (Ranks{6, 7}));
  EXPECT_EQ(g.ranksSharingGpu(2), (Ranks{2, 3}));
  ASSERT_EQ(g.numaGroups(1).size(), 2u);
  EXPECT_EQ(g.numaGroups(1)[1], (Ranks{6, 7}));
  EXPECT_TRUE(g.sameNuma(4, 5));
  EXPECT_FALSE(g.sameNuma(1, 5));  // same node id, other host
  EXPECT_TRUE(g.sameGpu(0, 1));
  EXPECT_FALSE(g.sameGpu(0, 4));
}

TEST(GlobalTopologyTest, LinkClassesBetweenRanks) {
  EmulatedHostShape shape;
  shape.numaNodes = 2;
  shape.gpus = 4;
  GlobalTopology g = GlobalTopology::emulated(8, 2, shape);
  EXPECT_EQ(g.linkBetween(0, 1), LinkClass::kSameNuma);
  EXPECT_EQ(g.linkBetween(1, 2), LinkClass::kCrossNuma);
  EXPECT_EQ(g.linkBetween(3, 4), LinkClass::kNetwork);
  EXPECT_EQ(g.linkBetween(2, 2), LinkClass::kSameNuma);
  EXPECT_EQ(g.linkBetween(1, 2, MemoryKind::kDevice), LinkClass::kCudaIpc);
  EXPECT_EQ(g.linkBetween(3, 4, MemoryKind::kDevice), LinkClass::kNetwork);
  EXPECT_EQ(g.linkClassesPresent(),
            (std::vector<LinkClass>{LinkClass::kSameNuma, LinkClass::kCrossNuma, LinkClass::kNetwork}));
  EXPECT_EQ(g.linkClassesPresent(MemoryKind::kDevice),
            (std::vector<LinkClass>{LinkClass::kNetwork, LinkClass::kCudaIpc}));
  EXPECT_EQ(g.representativePair(LinkClass::kSameNuma), std::pair(0, 1));
  EXPECT_EQ(g.representativePair(LinkClass::kCrossNuma), std::pair(0, 2));
  EXPECT_EQ(g.representativePair(LinkClass::kNetwork), std::pair(0, 4));
  EXPECT_EQ(g.representativePair(LinkClass::kCudaIpc, MemoryKind::kDevice), std::pair(0, 1));
  EXPECT_FALSE(g.representativePair(LinkClass::kRdma));
  EXPECT_FALSE(g.representativePair(LinkClass::kCudaIpc));

  shape.rdma = true;
  GlobalTopology r = GlobalTopology::emulated(4, 2, shape);
  EXPECT_EQ(r.linkBetween(1, 2), LinkClass::kRdma);
  EXPECT_EQ(r.representativePair(LinkClass::kRdma), std::pair(0, 2));
  EXPECT_FALSE(r.representativePair(LinkClass::kNetwork));
}

TEST(GlobalTopologyTest, IntraAndInterHostLinksForTheCostModel) {
  EmulatedHostShape shape;
  EXPECT_EQ(GlobalTopology::emulated(4, 2, shape).intraHostLink(), LinkClass::kSameNuma);
  EXPECT_EQ(GlobalTopology::emulated(4, 2, shape).interHostLink(), LinkClass::kNetwork);
  EXPECT_EQ(GlobalTopology::emulated(2, 2, shape).intraHostLink(), LinkClass::kSameNuma);
  shape.numaNodes = 2;
  shape.gpus = 2;
  GlobalTopology g = GlobalTopology::emulated(4, 1, shape);
  EXPECT_EQ(g.intraHostLink(), LinkClass::kCrossNuma);
  EXPECT_EQ(g.intraHostLink(MemoryKind::kDevice), LinkClass::kCudaIpc);
  EXPECT_EQ(g.interHostLink(), LinkClass::kNetwork);
  shape.rdma = true;
  EXPECT_EQ(GlobalTopology::emulated(4, 1, shape).interHostLink(), LinkClass::kRdma);
  EXPECT_EQ(GlobalTopology::emulated(4, 2, shape).interHostLink(), LinkClass::kRdma);
  GlobalTopology mixed({at(0, "a", 0, -1, true), at(1, "b", 0, -1, true), at(2, "c", 0, -1, false)});
  EXPECT_EQ(mixed.interHostLink(), LinkClass::kNetwork);
}

TEST(GlobalTopologyTest, RdmaNeedsBothHostsAndOnlyTheLeaderSpeaksForAHost) {
  GlobalTopology g(
      {at(0, "a", 0, -1, true), at(1, "a", 0, -1, false), at(2, "b", 0, -1, true), at(3, "c", 0, -1, false)});
  EXPECT_EQ(g.linkBetween(0, 2), LinkClass::kRdma);
  EXPECT_EQ(g.linkBetween(1, 2), LinkClass::kRdma);  // host a's leader has RDMA
  EXPECT_EQ(g.linkBetween(0, 3), LinkClass::kNetwork);
  EXPECT_EQ(g.representativePair(LinkClass::kRdma), std::pair(0, 2));
  EXPECT_EQ(g.representativePair(LinkClass::kNetwork), std::pair(0, 3));
}

TEST(GlobalTopologyTest, DeviceBuffersWithoutAGpuUseTheHostLinks) {
  // Rank 1 has no GPU: with device buffers, 0-1 is still a NUMA link; 0-2 (both GPUs) is CUDA IPC.
  GlobalTopology g({at(0, "a", 0, 0), at(1, "a", 0, -1), at(2, "a", 1, 1)});
  EXPECT_EQ(g.linkBetween(0, 1, MemoryKind::kDevice), LinkClass::kSameNuma);
  EXPECT_EQ(g.linkBetween(0, 2, MemoryKind::kDevice), LinkClass::kCudaIpc);
  EXPECT_EQ(g.linkBetween(1, 2, MemoryKind::kDevice), LinkClass::kCrossNuma);
  EXPECT_EQ(g.representativePair(LinkClass::kSameNuma, MemoryKind::kDevice), std::pair(0, 1));
  EXPECT_EQ(g.representativePair(LinkClass::kCrossNuma, MemoryKind::kDevice), std::pair(1, 2));
}

TEST(GlobalTopologyTest, LargeWorldsAreCheap) {
  EmulatedHostShape shape;
  shape.numaNodes = 2;
  GlobalTopology g = GlobalTopology::emulated(4096, 512, shape);
  EXPECT_EQ(g.leaders().size(), 512u);
  EXPECT_EQ(g.leaders()[511], 4088);
  EXPECT_EQ(g.linkClassesPresent(MemoryKind::kDevice).size(), 3u);
  std::string text = describeTopology(g, LinkModel());
  EXPECT_NE(text.find("4096 ranks on 512 hosts, 8 per host"), std::string::npos) << text;
  EXPECT_NE(text.find("... and 480 more hosts"), std::string::npos) << text;
}

TEST(GlobalTopologyTest, DescriptionNamesHostsNodesAndLinks) {
  EmulatedHostShape shape;
  shape.numaNodes = 2;
  shape.hostIdPrefix = "node";
  GlobalTopology g = GlobalTopology::emulated(5, 2, shape);
  std::string text = describeTopology(g, LinkModel());
  EXPECT_NE(text.find("topology: 5 ranks on 2 hosts, 2..3 per host (uneven); leaders 0,3\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("host 0 'node#h0': ranks 0-2; 2 NUMA nodes, 0 GPUs; NUMA node 0: ranks 0-1; NUMA node 1: "
                      "ranks 2\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("network 15 us 2 GB/s (default, e.g. ranks 0-3)"), std::string::npos) << text;
}

TEST(LinkModelTest, DefaultsNamesAndOverrides) {
  LinkModel m;
  for (LinkClass c : kAllLinkClasses) {
    EXPECT_EQ(m.params(c), defaultLinkParams(c));
    EXPECT_EQ(m.source(c), LinkSource::kDefault);
    EXPECT_EQ(linkClassFromName(linkClassName(c)), c);
  }
  EXPECT_FALSE(linkClassFromName("tcp"));
  EXPECT_STREQ(linkClassName(LinkClass::kCudaIpc), "cuda_ipc");
  EXPECT_DOUBLE_EQ(m.transferUs(LinkClass::kNetwork, 2'000'000), 15.0 + 1000.0);  // 2 MB at 2 GB/s = 1 ms
  m.set(LinkClass::kNetwork, {10, 4}, LinkSource::kProbe);
  EXPECT_EQ(m.params(LinkClass::kNetwork), (LinkParams{10, 4}));
  EXPECT_EQ(m.source(LinkClass::kNetwork), LinkSource::kProbe);
  EXPECT_NE(m, LinkModel());
  EXPECT_THROW(m.set(LinkClass::kRdma, {1, 0}, LinkSource::kFile), Error);
  EXPECT_THROW(m.set(LinkClass::kRdma, {-1, 1}, LinkSource::kFile), Error);
  EXPECT_THROW(m.set(LinkClass::kRdma, {1, NAN}, LinkSource::kFile), Error);
}

}  // namespace
}  // namespace chorus
