#include "core/params.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"

namespace chorus {

// docs/settings.md's tables against core/params.def: every declared knob has exactly one row, with the declared
// default in its second column, and every row names a declared knob.
TEST(Params, SettingsPageMatchesParamsDef) {
  std::ifstream f(CHORUS_SOURCE_DIR "/docs/settings.md");
  ASSERT_TRUE(f) << "docs/settings.md not found";
  std::map<std::string, std::vector<std::string>> rows;  // knob -> the default cell of each of its rows
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("| `CHORUS_", 0) != 0) continue;
    std::vector<std::string> cells;
    std::stringstream in(line.substr(1));
    for (std::string cell; std::getline(in, cell, '|');) {
      std::string text;
      for (char c : cell) {
        if (c != '`') text += c;
      }
      const size_t b = text.find_first_not_of(' '), e = text.find_last_not_of(' ');
      cells.push_back(b == std::string::npos ? "" : text.substr(b, e - b + 1));
    }
    ASSERT_GE(cells.size(), 2u) << line;
    rows[cells[0]].push_back(cells[1]);
  }
  std::set<std::string> declared;
  for (const params::Knob& k : params::all()) {
    declared.insert(k.name);
    const auto it = rows.find(k.name);
    if (it == rows.end()) {
      ADD_FAILURE() << k.name << " is declared in core/params.def but has no row in docs/settings.md";
      continue;
    }
    EXPECT_EQ(it->second.size(), 1u) << k.name << " has " << it->second.size() << " rows in docs/settings.md";
    EXPECT_EQ(it->second.front(), k.defaultValue)
        << k.name << ": docs/settings.md gives the default \"" << it->second.front() << "\", core/params.def \""
        << k.defaultValue << "\"";
  }
  for (const auto& row : rows) {
    EXPECT_TRUE(declared.count(row.first)) << "docs/settings.md has a row for " << row.first
                                      << ", which core/params.def does not declare";
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
