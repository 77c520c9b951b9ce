#include "topology/network_interfaces.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/host_port.h"

namespace chorus {

TEST(NetworkInterfaces, NcclSyntax) {
  EXPECT_TRUE(interfaceMatches("", "eth0"));
  EXPECT_TRUE(interfaceMatches("eth", "eth0"));
  EXPECT_TRUE(interfaceMatches("ib,eth", "eth1"));
  EXPECT_FALSE(interfaceMatches("ib", "eth0"));
  EXPECT_FALSE(interfaceMatches("^eth", "eth0"));
  EXPECT_TRUE(interfaceMatches("^docker,lo", "eth0"));
  EXPECT_FALSE(interfaceMatches("^docker,lo", "lo"));
  EXPECT_TRUE(interfaceMatches("=eth0", "eth0"));
  EXPECT_FALSE(interfaceMatches("=eth", "eth0"));
  EXPECT_FALSE(interfaceMatches("^=lo", "lo"));
  EXPECT_TRUE(interfaceMatches("^=lo", "lo0"));
}

TEST(NetworkInterfaces, LoopbackCanBeChosenAndBadSpecsNameTheInterfaces) {
  EXPECT_EQ(chooseNetworkInterface("=lo").name, "lo");
  try {
    chooseNetworkInterface("=no-such-interface");
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), chorusInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("lo"), std::string::npos) << e.what();
  }
}

}  // namespace chorus

namespace chorus::test {
namespace {

std::vector<std::string> picked(const std::vector<NetworkInterface>& rails) {
  std::vector<std::string> out;
  for (const auto& r : rails) out.push_back(r.name + " " + r.address);
  return out;
}

// A dual-stack host as listNetworkInterfaces orders it: IPv4, then global IPv6, then link-local.
std::vector<NetworkInterface> dualStack() {
  return {{"lo", "127.0.0.1", true},       {"eth0", "10.0.0.1", false},
          {"eth1", "10.1.0.1", false},     {"lo", "::1", true},
          {"eth0", "fd00::1", false},      {"ib0", "fd00:9::1", false},
          {"eth0", "fe80::1%eth0", false}, {"eth1", "fe80::2%eth1", false},
          {"eth2", "fe80::3%eth2", false}};
}

// An IPv6-only host: no IPv4 address, not even on lo.
std::vector<NetworkInterface> v6Only() {
  return {{"lo", "::1", true},
          {"eth0", "fd00:77::1", false},
          {"eth0", "fe80::a%eth0", false},
          {"eth1", "fe80::b%eth1", false}};
}

TEST(SocketFamily, ParsesNcclsValuesAndRefusesOthers) {
  EXPECT_EQ(parseSocketFamily("", "CHORUS_SOCKET_FAMILY"), AF_UNSPEC);
  EXPECT_EQ(parseSocketFamily("AF_INET", "CHORUS_SOCKET_FAMILY"), AF_INET);
  EXPECT_EQ(parseSocketFamily("AF_INET6", "CHORUS_SOCKET_FAMILY"), AF_INET6);
  try {
    parseSocketFamily("inet6", "CHORUS_SOCKET_FAMILY");
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), chorusInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("CHORUS_SOCKET_FAMILY 'inet6'"), std::string::npos) << e.what();
  }
}

TEST(SocketFamily, EitherPrefersIpv4AndTheFamilyKeepsOnlyItsAddresses) {
  EXPECT_EQ(picked(chooseRails(dualStack(), "", 4)), (std::vector<std::string>{"eth0 10.0.0.1", "eth1 10.1.0.1"}));
  EXPECT_EQ(picked(chooseRails(dualStack(), "", 4, AF_INET6)),
            (std::vector<std::string>{"eth0 fd00::1"}));  // eth1 has only a link-local address: not of eth0's kind
  EXPECT_EQ(picked(chooseRails(dualStack(), "=eth1", 1, AF_INET6)), (std::vector<std::string>{"eth1 fe80::2%eth1"}));
  EXPECT_EQ(picked(chooseRails(dualStack(), "^eth,lo", 4, AF_INET6)), (std::vector<std::string>{"ib0 fd00:9::1"}));
  EXPECT_EQ(picked(chooseRails(dualStack(), "=lo", 1, AF_INET6)), (std::vector<std::string>{"lo ::1"}));
  EXPECT_EQ(picked(chooseRails(v6Only(), "", 4)), (std::vector<std::string>{"eth0 fd00:77::1"}));
  EXPECT_EQ(picked(chooseRails(v6Only(), "eth", 4)),
            (std::vector<std::string>{"eth0 fd00:77::1", "eth1 fe80::b%eth1"}));
  try {
    chooseRails(v6Only(), "", 4, AF_INET);
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), chorusInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("CHORUS_SOCKET_FAMILY=AF_INET "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("eth0 fd00:77::1"), std::string::npos) << e.what();
  }
}

TEST(SocketFamily, LinkLocalOnlyWhereNothingElseIsAndWithItsZone) {
  const std::vector<NetworkInterface> linkLocal = {{"lo", "::1", true}, {"eth0", "fe80::1%eth0", false}};
  EXPECT_EQ(picked(chooseRails(linkLocal, "", 4)), (std::vector<std::string>{"eth0 fe80::1%eth0"}));
  EXPECT_TRUE(isLinkLocal({"eth0", "fe80::1%eth0", false}));
  EXPECT_TRUE(isLinkLocal({"eth0", "febf::1", false}));  // fe80::/10 ends at febf
  EXPECT_FALSE(isLinkLocal({"eth0", "fec0::1", false}));
  EXPECT_FALSE(isLinkLocal({"eth0", "fd00::1", false}));
  EXPECT_FALSE(isLinkLocal({"eth0", "10.0.0.1", false}));
  EXPECT_EQ(familyOf({"eth0", "fe80::1%eth0", false}), AF_INET6);
  EXPECT_EQ(familyOf({"eth0", "10.0.0.1", false}), AF_INET);
}

// This host's own list: every link-local address carries its interface as zone, and comes after the interface's
// other addresses.
TEST(SocketFamily, ThisHostsLinkLocalAddressesCarryTheirZone) {
  const std::vector<NetworkInterface> all = listNetworkInterfaces();
  bool seenLinkLocal = false;
  for (const NetworkInterface& i : all) {
    if (isLinkLocal(i)) {
      EXPECT_EQ(i.address.substr(i.address.find('%') + 1), i.name) << i.address;
      seenLinkLocal = true;
    } else {
      EXPECT_FALSE(seenLinkLocal) << i.name << " " << i.address << " after a link-local address";
      EXPECT_EQ(i.address.find('%'), std::string::npos) << i.address;
    }
  }
}

}  // namespace
}  // namespace chorus::test
