#include "core/params.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <sstream>

#include "core/error.h"

namespace chorus {

TEST(Params, EveryKnobIsInTheReadmeTable) {
  std::ifstream f(CHORUS_SOURCE_DIR "/README.md");
  ASSERT_TRUE(f) << "README.md not found";
  std::stringstream ss;
  ss << f.rdbuf();
  std::string readme = ss.str();
  for (const params::Knob& k : params::all()) {
    EXPECT_NE(readme.find(std::string("| `") + k.name + "`"), std::string::npos)
        << k.name << " is declared in core/params.def but missing from the README's table";
  }
}

TEST(Params, DefaultsAndOverrides) {
  unsetenv("CHORUS_NSOCKS");
  EXPECT_EQ(params::nsocks(), "1");
  setenv("CHORUS_NSOCKS", "4", 1);
  EXPECT_EQ(params::nsocks(), "4");
  EXPECT_TRUE(params::isSet("CHORUS_NSOCKS"));
  unsetenv("CHORUS_NSOCKS");
}

TEST(Params, ParsersRejectBadValuesNamingTheKnob) {
  EXPECT_EQ(params::asInt("K", "12", 0, 100), 12);
  EXPECT_EQ(params::asBytes("K", "64K", 0, 1 << 30), 65536);
  EXPECT_EQ(params::asBytes("K", "2M", 0, 1 << 30), 2 << 20);
  EXPECT_DOUBLE_EQ(params::asSeconds("K", "1.5"), 1.5);
  try {
    params::asInt("CHORUS_NSOCKS", "seven", 1, 16);
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), chorusInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("CHORUS_NSOCKS=seven"), std::string::npos);
  }
  EXPECT_THROW(params::asInt("K", "17", 1, 16), Error);
  EXPECT_THROW(params::asBytes("K", "12Q", 0, 1 << 30), Error);
  EXPECT_THROW(params::asSeconds("K", "-1"), Error);
}

}  // namespace chorus
