// The ib transport's choices before any connection: which ports it may use (NCCL_IB_HCA's syntax), what it
// publishes, and how it refuses when named but unavailable.
#ifdef CHORUS_HAVE_VERBS
#include <gtest/gtest.h>

#include "core/comm_config.h"
#include "core/error.h"
#include "transports/ib/hca_filter.h"
#include "transports/transport_registry.h"

namespace chorus::test {
namespace {

TEST(HcaFilterTest, PrefixesExactNamesPortsAndExclusions) {
  EXPECT_TRUE(HcaFilter("").allows("mlx5_0", 1));
  HcaFilter prefix("mlx5");
  EXPECT_TRUE(prefix.allows("mlx5_0", 1));
  EXPECT_FALSE(prefix.allows("bnxt_re0", 1));
  HcaFilter ports("mlx5_0:1,mlx5_1");
  EXPECT_TRUE(ports.allows("mlx5_0", 1));
  EXPECT_FALSE(ports.allows("mlx5_0", 2));
  EXPECT_TRUE(ports.allows("mlx5_1", 2));
  EXPECT_TRUE(ports.allows("mlx5_10", 1));  // a prefix
  HcaFilter exact("=mlx5_1");
  EXPECT_TRUE(exact.allows("mlx5_1", 1));
  EXPECT_FALSE(exact.allows("mlx5_10", 1));
  HcaFilter exclude("^mlx5_1");
  EXPECT_TRUE(exclude.allows("mlx5_0", 1));
  EXPECT_FALSE(exclude.allows("mlx5_10", 1));
  HcaFilter excludeExact("^=mlx5_1");
  EXPECT_TRUE(excludeExact.allows("mlx5_10", 1));
  EXPECT_FALSE(excludeExact.allows("mlx5_1", 1));
  EXPECT_THROW(HcaFilter("mlx5_0:x"), Error);
}

std::unique_ptr<Transport> ibOf(CommConfig config) {
  for (auto& t : makeTransports(0, config, "ib-test", "")) {
    if (std::string(t.record->name) == "ib") return std::move(t.transport);
  }
  return nullptr;
}

TEST(IbTransportTest, NamedButWithoutADeviceFailsAtOnceSayingWhy) {
  CommConfig config;
  config.transports = "ib";
  config.ibHca = "=no_such_hca";  // whatever this machine has, nothing matches
  auto ib = ibOf(config);
  ASSERT_TRUE(ib);
  PeerCard card;
  try {
    ib->describeSelf(card);
    FAIL() << "describeSelf succeeded without a usable device";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), chorusSystemError);
    EXPECT_NE(std::string(e.what()).find("the ib transport is unavailable"), std::string::npos) << e.what();
  }
}

TEST(IbTransportTest, UnavailableAndNotNamedPublishesNothing) {
  CommConfig config;
  config.ibDisable = true;
  auto ib = ibOf(config);
  ASSERT_TRUE(ib);
  PeerCard card;
  ib->describeSelf(card);
  EXPECT_EQ(card.entries.count("ib.gid"), 0u);
  EXPECT_EQ(card.entries.count("ib.oob.addr"), 0u);
}

TEST(IbTransportTest, TheSoftwareDevicePublishesARocePort) {
  CommConfig config;
  config.ibEmulation = true;
  auto ib = ibOf(config);
  ASSERT_TRUE(ib);
  PeerCard card;
  ib->describeSelf(card);
  EXPECT_EQ(card.entries.at("ib.link"), "soft-roce");
  EXPECT_FALSE(networkIsRdma(card));  // it costs what TCP costs
  EXPECT_EQ(card.entries.at("ib.gid").rfind("::ffff:", 0), 0u) << card.entries.at("ib.gid");
  EXPECT_NE(card.entries.at("ib.port").find("chorus_soft0:1"), std::string::npos);
  EXPECT_TRUE(card.entries.count("ib.oob.addr"));
  EXPECT_TRUE(ib->canConnect(card, card));
}

TEST(IbTransportTest, OnlyRealRdmaPortsMakeTheNetworkRdma) {
  PeerCard card;
  EXPECT_FALSE(networkIsRdma(card));
  card.entries["ib.link"] = "roce";
  EXPECT_TRUE(networkIsRdma(card));
  card.entries["ib.link"] = "ib";
  EXPECT_TRUE(networkIsRdma(card));
  card.entries["ib.link"] = "soft-roce";
  EXPECT_FALSE(networkIsRdma(card));
}

}  // namespace
}  // namespace chorus::test
#endif  // CHORUS_HAVE_VERBS
