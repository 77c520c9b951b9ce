#include "core/params.h"

#include <cerrno>
#include <cstdlib>
#include <mutex>

#include "core/error.h"
#include "core/logging.h"

namespace chorus::params {

namespace {
std::string valueOr(const char* name, const char* def) {
  const char* v = std::getenv(name);
  return (v && *v) ? std::string(v) : std::string(def);
}
}  // namespace

const std::vector<Knob>& all() {
  static const std::vector<Knob> knobs = {
#define CHORUS_PARAM(getter, name, def, desc) {name, def, desc},
#include "core/params.def"
#undef CHORUS_PARAM
  };
  return knobs;
}

#define CHORUS_PARAM(getter, name, def, desc) \
  std::string getter() { return valueOr(name, def); }
#include "core/params.def"
#undef CHORUS_PARAM

bool isSet(const char* name) {
  const char* v = std::getenv(name);
  return v && *v;
}

long long asInt(const char* name, const std::string& value, long long lo, long long hi) {
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(value.c_str(), &end, 10);
  if (errno != 0 || end == value.c_str() || *end != '\0' || v < lo || v > hi) {
    throwInvalidArgument(std::string(name) + "=" + value + " is not an integer in [" + std::to_string(lo) + ", " +
                         std::to_string(hi) + "]");
  }
  return v;
}

double asSeconds(const char* name, const std::string& value) {
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(value.c_str(), &end);
  if (errno != 0 || end == value.c_str() || *end != '\0' || !(v >= 0) || v > 1e9) {
    throwInvalidArgument(std::string(name) + "=" + value + " is not a number of seconds >= 0");
  }
  return v;
}

long long asBytes(const char* name, const std::string& value, long long lo, long long hi) {
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(value.c_str(), &end, 10);
  bool ok = errno == 0 && end != value.c_str() && v >= 0;
  if (ok && *end) {
    switch (*end) {
      case 'k': case 'K': v <<= 10; break;
      case 'm': case 'M': v <<= 20; break;
      case 'g': case 'G': v <<= 30; break;
      default: ok = false;
    }
    ok = ok && end[1] == '\0';
  }
  if (!ok || v < lo || v > hi) {
    throwInvalidArgument(std::string(name) + "=" + value + " is not a size in [" + std::to_string(lo) + ", " +
                         std::to_string(hi) + "] bytes (suffixes K, M, G)");
  }
  return v;
}

void logSetKnobs(int rank) {
  static std::once_flag once;
  std::call_once(once, [rank] {
    for (const Knob& k : all()) {
      if (!isSet(k.name)) continue;
      // Secrets are never written to logs: only that one is set.
      const bool secret = std::string_view(k.name).find("SECRET") != std::string_view::npos;
      CHORUS_INFO(rank, k.name << "=" << (secret ? "(hidden)" : std::getenv(k.name)) << " (set in the environment)");
    }
  });
}

}  // namespace chorus::params
