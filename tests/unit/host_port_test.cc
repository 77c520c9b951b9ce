// "host:port" as CHORUS_STORE, MASTER_ADDR and the TCP cards write it: IPv4, names, bracketed IPv6 (with a zone
// for link-local), and the strings that are refused.
#include "core/host_port.h"

#include <gtest/gtest.h>

#include "core/bootstrap/launch_spec.h"
#include "core/error.h"
#include "tests/harness/scoped_env.h"

namespace chorus::test {
namespace {

std::pair<std::string, uint16_t> split(const std::string& s) {
  std::string host;
  uint16_t port = 0;
  splitHostPort(s, "CHORUS_STORE", &host, &port);
  return {host, port};
}

std::string refusal(const std::string& s) {
  try {
    split(s);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), chorusInvalidArgument);
    return e.what();
  }
  ADD_FAILURE() << s << " was accepted";
  return "";
}

TEST(HostPort, SplitsEveryFamilyAndNames) {
  EXPECT_EQ(split("10.0.0.1:29500"), std::make_pair(std::string("10.0.0.1"), uint16_t{29500}));
  EXPECT_EQ(split("node-3.cluster:1"), std::make_pair(std::string("node-3.cluster"), uint16_t{1}));
  EXPECT_EQ(split("[fd00::1]:29500"), std::make_pair(std::string("fd00::1"), uint16_t{29500}));
  EXPECT_EQ(split("[::1]:80"), std::make_pair(std::string("::1"), uint16_t{80}));
  EXPECT_EQ(split("[fe80::1%eth0]:29500"), std::make_pair(std::string("fe80::1%eth0"), uint16_t{29500}));
  EXPECT_EQ(split("[::ffff:10.0.0.1]:7"), std::make_pair(std::string("::ffff:10.0.0.1"), uint16_t{7}));
}

TEST(HostPort, RefusesBareIpv6AndBrokenBrackets) {
  EXPECT_NE(refusal("fd00::1:29500").find("write an IPv6 host in brackets, [fd00::1]:port"), std::string::npos);
  EXPECT_NE(refusal("[fd00::1:29500").find("not [IPv6 address]:port"), std::string::npos);
  EXPECT_NE(refusal("[]:29500").find("not [IPv6 address]:port"), std::string::npos);
  EXPECT_NE(refusal("[fd00::1]x:29500").find("not [IPv6 address]:port"), std::string::npos);
  EXPECT_NE(refusal("[fd00::1]").find("not [IPv6 address]:port"), std::string::npos);
  EXPECT_NE(refusal("10.0.0.1").find("not host:port"), std::string::npos);
  EXPECT_NE(refusal("10.0.0.1:").find("not host:port"), std::string::npos);
  EXPECT_NE(refusal("10.0.0.1:70000").find("bad port"), std::string::npos);
}

TEST(HostPort, JoinsWithBracketsForIpv6) {
  EXPECT_EQ(joinHostPort("10.0.0.1", 29500), "10.0.0.1:29500");
  EXPECT_EQ(joinHostPort("fd00::1", 29500), "[fd00::1]:29500");
  EXPECT_EQ(joinHostPort("fe80::1%eth0", 1), "[fe80::1%eth0]:1");
  EXPECT_EQ(split(joinHostPort("fe80::1%eth0", 1)).first, "fe80::1%eth0");
  EXPECT_EQ(bareHost("[fd00::1]"), "fd00::1");
  EXPECT_EQ(bareHost("fd00::1"), "fd00::1");
  EXPECT_EQ(bareHost("master"), "master");
}

TEST(HostPort, ALinkLocalPeerIsDialledThroughThisEndsInterface) {
  EXPECT_EQ(withLocalZone("fe80::1%eth0", "ens5"), "fe80::1%ens5");
  EXPECT_EQ(withLocalZone("fe80::1", "ens5"), "fe80::1%ens5");
  EXPECT_EQ(withLocalZone("fd00::1", "ens5"), "fd00::1");
  EXPECT_EQ(withLocalZone("10.0.0.1", "ens5"), "10.0.0.1");
  EXPECT_EQ(withLocalZone("node-3", "ens5"), "node-3");
}

// torchrun writes MASTER_ADDR as it was given: an IPv6 address bare or in brackets.
TEST(HostPort, MasterAddrMayBeIpv6BareOrBracketed) {
  for (const char* addr : {"fd00::7", "[fd00::7]"}) {
    SCOPED_TRACE(addr);
    ScopedEnv env({{"CHORUS_STORE", std::nullopt},
                   {"CHORUS_RANK", std::nullopt},
                   {"CHORUS_WORLD_SIZE", std::nullopt},
                   {"RANK", "1"},
                   {"WORLD_SIZE", "2"},
                   {"MASTER_ADDR", addr},
                   {"MASTER_PORT", "29500"},
                   {"TORCHELASTIC_USE_AGENT_STORE", std::nullopt}});
    const LaunchSpec s = launchSpecFromEnv();
    EXPECT_EQ(s.storeHost, "fd00::7");
    EXPECT_EQ(s.storePort, 29500);
  }
  ScopedEnv env({{"CHORUS_STORE", "fd00::7:29500"}, {"CHORUS_RANK", "0"}, {"CHORUS_WORLD_SIZE", "1"}});
  EXPECT_THROW(launchSpecFromEnv(), Error);
}

}  // namespace
}  // namespace chorus::test
