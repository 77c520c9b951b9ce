#include "tests/harness/build_tree.h"

#include <filesystem>
#include <stdexcept>

namespace chorus::test {

std::string selfExecutable() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) throw std::runtime_error("cannot read /proc/self/exe: " + error.message());
  return self.string();
}

std::string buildTreePath(const std::string& relative) {
  // The test binaries live in <build>/tests/.
  return (std::filesystem::path(selfExecutable()).parent_path().parent_path() / relative).string();
}

}  // namespace chorus::test
