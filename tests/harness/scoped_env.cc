#include "tests/harness/scoped_env.h"

#include <cstdlib>

namespace chorus::test {

namespace {

void setOrUnset(const std::string& name, const std::optional<std::string>& value) {
  if (value) {
    ::setenv(name.c_str(), value->c_str(), 1);
  } else {
    ::unsetenv(name.c_str());
  }
}

}  // namespace

ScopedEnv::ScopedEnv(std::vector<std::pair<std::string, std::optional<std::string>>> settings) {
  for (auto& [name, value] : settings) {
    const char* old = std::getenv(name.c_str());
    saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
    setOrUnset(name, value);
  }
}

ScopedEnv::~ScopedEnv() {
  for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) setOrUnset(it->first, it->second);
}

}  // namespace chorus::test
