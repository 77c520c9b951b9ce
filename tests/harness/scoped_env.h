// Sets environment variables for the lifetime of a scope and restores the previous values afterwards.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace chorus::test {

// For what the environment alone carries: process-level knobs, the environment that process worlds' ranks inherit,
// and tests of how unset config fields fall back to the variables. A communicator's own settings belong in its
// config (ThreadWorld takes one); the next test starts from the environment this one found.
class ScopedEnv {
 public:
  // Each pair sets name to value; a std::nullopt value unsets name.
  explicit ScopedEnv(std::vector<std::pair<std::string, std::optional<std::string>>> settings);
  // One variable: sets name to value, or unsets it for std::nullopt.
  ScopedEnv(std::string name, std::optional<std::string> value) : ScopedEnv({{std::move(name), std::move(value)}}) {}
  // Puts back every variable this object changed, in reverse order.
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

}  // namespace chorus::test
