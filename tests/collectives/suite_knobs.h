// The environment every collective test runs under, so that results never depend on the caller's CHORUS_*.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "chorus/chorus.hpp"

namespace chorus::test {

using EnvSettings = std::vector<std::pair<std::string, std::optional<std::string>>>;

// How long one test's calls may take before its world is aborted (well under the ctest TIMEOUT).
inline constexpr std::chrono::seconds kCaseDeadline{150};

// For process worlds, whose ranks take their settings from the environment they inherit: 4 KiB slices, host and
// device (so that a thousand elements already span several), a 30 s timeout on every blocking wait, the algorithm
// chosen by size, one socket per pair; `overrides` replace any of these or add others. Thread worlds take suiteConfig()
// instead.
inline EnvSettings suiteKnobs(const EnvSettings& overrides = {}) {
  EnvSettings settings = {
      {"CHORUS_CHUNK_SIZE", "4096"},
      {"CHORUS_DEVICE_CHUNK_SIZE", "4096"},
      {"CHORUS_TIMEOUT", "30"},
      {"CHORUS_ALGO", std::nullopt},
      {"CHORUS_NSOCKS", std::nullopt},
      {"CHORUS_TRANSPORT", std::nullopt},
  };
  for (const auto& o : overrides) {
    bool replaced = false;
    for (auto& s : settings) {
      if (s.first == o.first) {
        s.second = o.second;
        replaced = true;
      }
    }
    if (!replaced) settings.push_back(o);
  }
  return settings;
}

// The same settings as a communicator's config, for worlds of threads (whose ranks share one environment): what
// suiteKnobs() sets, every other field from the environment. Tests adjust the fields they need.
inline Config suiteConfig() {
  Config c;
  c.chunkSize = 4096;
  c.deviceChunkSize = 4096;
  c.timeoutSeconds = 30;
  c.algo = "";
  c.socketsPerPeer = 1;
  c.transports = "";
  return c;
}

}  // namespace chorus::test
