#include "topology/network_interfaces.h"

#include <gtest/gtest.h>

#include "core/error.h"

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
