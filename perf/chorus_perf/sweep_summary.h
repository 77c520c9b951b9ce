// The lines below a sweep's table that say what it found at a glance: the peak bus bandwidth and where it was
// reached, the small-message latency, the transports and the algorithms by size range. Pure formatting, so that
// tests/unit/perf_args_test.cc can pin it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "perf/chorus_perf/perf_report.h"

namespace chorus::perf {

// "8 B", "64 KiB", "16 MiB", "1 GiB"; sizes that are not a whole unit keep bytes ("1000 B").
inline std::string humanBytes(size_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  size_t unit = 0;
  while (unit + 1 < std::size(kUnits) && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return std::to_string(bytes) + " " + kUnits[unit];
}

// "ring 64 KiB-64 MiB": each run of sizes that ran one algorithm, in size order ("" algorithms are skipped).
inline std::string algorithmRanges(const std::vector<SizeRecord>& rows) {
  std::string out;
  for (size_t i = 0; i < rows.size();) {
    size_t j = i;
    while (j + 1 < rows.size() && rows[j + 1].algorithm == rows[i].algorithm) ++j;
    if (!rows[i].algorithm.empty()) {
      if (!out.empty()) out.append(", ");
      out.append(rows[i].algorithm).append(" ").append(humanBytes(rows[i].bytes));
      if (j > i) out.append("-").append(humanBytes(rows[j].bytes));
    }
    i = j + 1;
  }
  return out;
}

// The summary block (empty for no rows). transports: the links to this rank's peers ("shm").
inline std::string formatSweepSummary(const std::vector<SizeRecord>& rows, const std::string& transports) {
  const SizeRecord* peak = nullptr;
  const ModeResult* peakMode = nullptr;
  const SizeRecord* smallest = nullptr;
  for (const SizeRecord& r : rows) {
    for (const ModeResult* m : {&r.outOfPlace, &r.inPlace}) {
      if (m == &r.inPlace && !r.hasInPlace) continue;
      if (peakMode == nullptr || m->busBandwidthGBs > peakMode->busBandwidthGBs) {
        peak = &r;
        peakMode = m;
      }
    }
    if (smallest == nullptr && r.count > 0) smallest = &r;
  }
  if (peak == nullptr) return "";
  char line[256];
  std::string out = "# Summary\n";
  std::snprintf(line, sizeof(line), "#   peak bus bandwidth    : %.2f GB/s at %s (%s)\n", peakMode->busBandwidthGBs,
                humanBytes(peak->bytes).c_str(), peakMode == &peak->outOfPlace ? "out-of-place" : "in-place");
  out += line;
  if (smallest != nullptr) {
    std::snprintf(line, sizeof(line), "#   small-message latency : %.2f us at %s (out-of-place)\n",
                  smallest->outOfPlace.timeUs, humanBytes(smallest->bytes).c_str());
    out += line;
  }
  out += "#   transport             : " + (transports.empty() ? std::string("none (one rank)") : transports) + "\n";
  const std::string algorithms = algorithmRanges(rows);
  out += "#   algorithm             : " + (algorithms.empty() ? std::string("point-to-point") : algorithms) + "\n";
  return out;
}

}  // namespace chorus::perf
