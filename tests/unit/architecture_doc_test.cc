// docs/architecture.md's decision index ("Where each decision is taken") names files and functions: every one must
// exist, so that a rename or a move that forgets the index fails here rather than misleading a reader.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

std::string readFile(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The decision index: from its heading to the next one.
std::string decisionIndex() {
  const std::string doc = readFile(fs::path(CHORUS_SOURCE_DIR) / "docs/architecture.md");
  const size_t start = doc.find("## Where each decision is taken");
  if (start == std::string::npos) return "";
  const size_t end = doc.find("\n## ", start + 1);
  return doc.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// Every C++ source and header of the library and its tools.
const std::vector<std::string>& sources() {
  static const std::vector<std::string> all = [] {
    std::vector<std::string> out;
    for (const char* folder : {"src", "algorithms", "transports", "device", "topology", "reduce", "core", "include",
                               "launcher", "perf", "emulation"}) {
      const fs::path root = fs::path(CHORUS_SOURCE_DIR) / folder;
      if (!fs::exists(root)) continue;
      for (const auto& e : fs::recursive_directory_iterator(root)) {
        const std::string ext = e.path().extension().string();
        if (e.is_regular_file() && (ext == ".cc" || ext == ".h" || ext == ".cu")) out.push_back(readFile(e.path()));
      }
    }
    return out;
  }();
  return all;
}

bool anySource(const std::regex& pattern) {
  for (const std::string& s : sources()) {
    if (std::regex_search(s, pattern)) return true;
  }
  return false;
}

TEST(ArchitectureDocTest, EveryFileAndFunctionTheDecisionIndexNamesExists) {
  const std::string index = decisionIndex();
  ASSERT_FALSE(index.empty()) << "docs/architecture.md has no \"Where each decision is taken\" section";
  const std::regex code("`([^`]+)`");
  const std::regex path(R"(^[\w./-]+/[\w.-]+\.\w+$)");
  const std::regex member(R"(^(\w+)::(\w+)$)");
  const std::regex identifier(R"(^[a-z]\w*[A-Z]\w*$|^[A-Z][a-z]\w*$)");  // camelCase functions, fields, types
  int files = 0, members = 0, names = 0;
  std::vector<std::string> missing;
  for (auto it = std::sregex_iterator(index.begin(), index.end(), code); it != std::sregex_iterator(); ++it) {
    const std::string token = (*it)[1];
    std::smatch m;
    if (std::regex_match(token, path)) {
      ++files;
      if (!fs::exists(fs::path(CHORUS_SOURCE_DIR) / token)) missing.push_back("file " + token);
    } else if (std::regex_match(token, m, member)) {
      ++members;
      // Defined out of line (Class::member(), or declared in the class (the class and the member in one file).
      const std::string cls = m[1], fn = m[2];
      const bool defined = anySource(std::regex("\\b" + cls + "::" + fn + "\\b"));
      bool declared = false;
      for (const std::string& s : sources()) {
        if (std::regex_search(s, std::regex("\\b(class|struct) " + cls + "\\b")) &&
            std::regex_search(s, std::regex("\\b" + fn + "\\b"))) {
          declared = true;
          break;
        }
      }
      if (!defined && !declared) missing.push_back("member " + token);
    } else if (std::regex_match(token, identifier)) {
      ++names;
      if (!anySource(std::regex("\\b" + token + "\\b"))) missing.push_back("name " + token);
    }
  }
  EXPECT_GT(files, 20);
  EXPECT_GT(members, 15);
  EXPECT_GT(names, 10);
  EXPECT_TRUE(missing.empty()) << "docs/architecture.md names what the tree lacks:\n"
                               << ::testing::PrintToString(missing);
}

}  // namespace
