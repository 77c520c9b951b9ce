// Sets environment variables for the lifetime of a scope and restores the previous values afterwards.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace chorus::test {

// Communicators read CHORUS_* knobs at init and every thread shares one environment, so a test sets its knobs
// with this before creating its world and the next test starts from the environment it found.
class ScopedEnv {
 public:
  // Each pair sets name to value; a std::nullopt value unsets name.
  explicit ScopedEnv(std::vector<std::pair<std::string, std::optional<std::string>>> settings);
  // Puts back every variable this object changed, in reverse order.
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

}  // namespace chorus::test
