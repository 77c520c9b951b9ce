#include "core/byte_text.h"

#include <cstdio>

namespace chorus {

std::string formatBytes(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 6) {
    value /= 1024;
    ++unit;
  }
  char buf[32];
  if (unit == 0 || value == static_cast<double>(static_cast<uint64_t>(value))) {
    std::snprintf(buf, sizeof(buf), "%llu %s", static_cast<unsigned long long>(value), units[unit]);
  } else {
    std::snprintf(buf, sizeof(buf), "%.1f %s", value, units[unit]);
  }
  return buf;
}

}  // namespace chorus
