// chorus-perf's output: the nccl-tests-shaped table on stdout, and one CSV / JSON record per size.
// Pure formatting (strings in, strings out) so that the unit tests can pin the column layout.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "perf/chorus_perf/collective_layout.h"
#include "perf/chorus_perf/perf_options.h"

namespace chorus::perf {

// Timing and verification of one mode (out-of-place or in-place) at one size.
struct ModeResult {
  double timeUs = 0;              // mean per iteration, max over ranks
  double algBandwidthGBs = 0;     // bytes / time
  double busBandwidthGBs = 0;     // algbw * the collective's factor
  std::optional<uint64_t> wrong;  // wrong elements summed over ranks; nullopt when not checked (-c 0)
};

// One row of the table: a size and both modes.
struct SizeRecord {
  std::string_view collective;
  int nranks = 0;
  size_t bytes = 0;
  size_t count = 0;
  std::string_view type;
  std::string_view op;  // "none" for broadcast and allgather
  int root = -1;        // -1 for collectives without a root
  ModeResult outOfPlace;
  ModeResult inPlace;
  bool hasInPlace = true;  // false: the collective has no in-place form ("-" in the table, empty in CSV, null in JSON)
  std::string_view algorithm;  // what the out-of-place calls ran ("" for point-to-point); a static name
};

// Fills the bandwidth fields of r from its time, as nccl-tests does (GB/s = 1e9 B/s).
inline void computeBandwidths(ModeResult& r, size_t bytes, double busFactor) {
  r.algBandwidthGBs = r.timeUs > 0 ? static_cast<double>(bytes) / r.timeUs / 1e3 : 0;
  r.busBandwidthGBs = r.algBandwidthGBs * busFactor;
}

// Width of an algorithm's column in the --algos table: its name, and room for a time.
inline int comparisonColumnWidth(const std::string& name) { return std::max(10, static_cast<int>(name.size())); }

namespace detail {

inline std::string formatted(const char* format, auto... args) {
  char buf[512];
  const int n = std::snprintf(buf, sizeof(buf), format, args...);
  return std::string(buf, n < 0 ? 0 : std::min(static_cast<size_t>(n), sizeof(buf) - 1));
}

// nccl-tests' time column: two decimals below 100 us, one below 10 ms, none above.
inline std::string formatTime(double us) {
  if (us >= 10000.0) return formatted("%7.0f", us);
  if (us >= 100.0) return formatted("%7.1f", us);
  return formatted("%7.2f", us);
}

inline std::string formatMissingMode() { return formatted("  %7s  %6s  %6s  %5s", "-", "-", "-", "-"); }

inline std::string formatMode(const ModeResult& r) {
  std::string wrong = r.wrong ? std::to_string(*r.wrong) : std::string("N/A");
  return formatted("  %s  %6.2f  %6.2f  %5s", formatTime(r.timeUs).c_str(), r.algBandwidthGBs, r.busBandwidthGBs,
                   wrong.c_str());
}

}  // namespace detail

// The lines above the table: the run's parameters (op "none" where the collective takes none), then the three
// column-title lines.
inline std::string formatTableHeader(const PerfOptions& o, int nranks) {
  const CollectiveInfo& info = collectiveInfo(o.collective);
  std::string out = detail::formatted(
      "# chorus-perf %s: nranks %d, datatype %s, op %s, root %d, iters %d, warmup %d, check %d\n",
      std::string(info.name).c_str(), nranks, std::string(dataTypeName(o.datatype)).c_str(),
      std::string(info.reduces ? redOpName(o.op) : "none").c_str(), o.root, o.iters, o.warmupIters, o.check);
  if (o.deviceBuffers) out += "# device buffers (--device gpu): times from stream-synchronized wall clock\n";
  if (o.group > 1) out += detail::formatted("# --group %d: times per group of %d calls\n", o.group, o.group);
  if (o.stream == PerfOptions::Stream::kHost) {
    out += "# --stream host: calls queued on a host stream, timed from the first enqueue to the synchronize\n";
  }
  if (o.stream == PerfOptions::Stream::kHostEach) {
    out += "# --stream host-each: each call queued on a host stream, then an event recorded and synchronized\n";
  }
  out += "#\n";
  out += detail::formatted("# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place\n", "",
                           "", "", "", "");
  out +=
      detail::formatted("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s\n", "size", "count", "type",
                        "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong");
  std::string units =
      detail::formatted("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s", "(B)", "(elements)", "", "",
                        "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)");
  return out + units + "\n";
}

// One data row: size, count, type, redop, root, then time, algbw, busbw, #wrong for each mode.
inline std::string formatTableRow(const SizeRecord& r) {
  return detail::formatted("%12zu  %12zu  %8s  %6s  %6d", r.bytes, r.count, std::string(r.type).c_str(),
                           std::string(r.op).c_str(), r.root) +
         detail::formatMode(r.outOfPlace) +
         (r.hasInPlace ? detail::formatMode(r.inPlace) : detail::formatMissingMode()) + "\n";
}

// The lines below the table: the total of wrong values and the mean bus bandwidth over all rows and modes.
inline std::string formatTableFooter(uint64_t totalWrong, double avgBusBandwidthGBs) {
  return detail::formatted("# Out of bounds values : %llu %s\n", static_cast<unsigned long long>(totalWrong),
                           totalWrong == 0 ? "OK" : "FAILED") +
         detail::formatted("# Avg bus bandwidth    : %g\n", avgBusBandwidthGBs) + "#\n";
}

// The CSV column names, one line.
// --algos: the column of "autotune" (a communicator tuning itself, not a forced algorithm), or -1.
inline int autotuneColumn(const PerfOptions& o) {
  for (size_t k = 0; k < o.algos.size(); ++k) {
    if (o.algos[k] == "autotune") return static_cast<int>(k);
  }
  return -1;
}

// --algos: the column of the fastest forced algorithm ("autotune" is not one; alone with the default, it is compared
// with itself).
inline size_t bestForced(const PerfOptions& o, const std::vector<double>& medianUs) {
  size_t best = 0;
  for (size_t k = 1; k < medianUs.size(); ++k) {
    if (static_cast<int>(k) != autotuneColumn(o) && (best == 0 || medianUs[k] < medianUs[best])) best = k;
  }
  return best == 0 ? 1 : best;
}

// --algos: the lines above the comparison table, naming the columns (the default selection first).
inline std::string formatComparisonHeader(const PerfOptions& o, int nranks) {
  const CollectiveInfo& info = collectiveInfo(o.collective);
  std::string out = detail::formatted(
      "# chorus-perf %s --algos: nranks %d, datatype %s, op %s, root %d, %d rounds of %d calls per algorithm, "
      "warmup %d, check %d\n",
      std::string(info.name).c_str(), nranks, std::string(dataTypeName(o.datatype)).c_str(),
      std::string(info.reduces ? redOpName(o.op) : "none").c_str(), o.root, o.rounds, o.iters, o.warmupIters, o.check);
  out += "# out-of-place time per call (us): median over the rounds, the algorithms' calls interleaved round by "
         "round\n";
  out += detail::formatted("# %10s", "size (B)");
  for (const std::string& name : o.algos) out += detail::formatted("  %*s", comparisonColumnWidth(name), name.c_str());
  out += detail::formatted("  %18s  %12s", "best forced", "default/best");
  out += detail::formatted("  %6s", "#wrong");
  // With autotune: the plans the default and autotune ran last, so that a row where both ran the same one reads as
  // the spread between two communicators, not a wrong default.
  if (autotuneColumn(o) >= 0) out += detail::formatted("  %-24s  %s", "default ran", "autotune ran");
  return out + "\n";
}

// One row: the size, each algorithm's median time, the fastest forced algorithm and the default's time over its;
// with autotune, also autotune's over the fastest's and the plans the default and autotune ran (ranPlans: theirs, in
// CHORUS_ALGO's syntax).
inline std::string formatComparisonRow(const PerfOptions& o, size_t bytes, const std::vector<double>& medianUs,
                                       size_t best, uint64_t wrong, const std::vector<std::string>& ranPlans = {}) {
  std::string out = detail::formatted("%12zu", bytes);
  for (size_t k = 0; k < o.algos.size(); ++k) {
    out += detail::formatted("  %*s", comparisonColumnWidth(o.algos[k]), detail::formatTime(medianUs[k]).c_str());
  }
  out += detail::formatted("  %18s  %12.2f", o.algos[best].c_str(), medianUs[0] / medianUs[best]);
  if (const int tuned = autotuneColumn(o); tuned >= 0) {
    out += detail::formatted("  %13.2f", medianUs[static_cast<size_t>(tuned)] / medianUs[best]);
  }
  out += detail::formatted("  %6llu", static_cast<unsigned long long>(wrong));
  if (autotuneColumn(o) >= 0 && ranPlans.size() == 2) {
    out += detail::formatted("  %-24s  %s", ranPlans[0].c_str(), ranPlans[1].c_str());
  }
  return out + "\n";
}

// Below the comparison: wrong values, and the size where the default came off worst against the best forced one.
// tunedWorstRatio < 0: no autotune column.
inline std::string formatComparisonFooter(uint64_t totalWrong, double worstRatio, size_t worstBytes,
                                          double tunedWorstRatio = -1, size_t tunedWorstBytes = 0) {
  std::string out = detail::formatted("# Out of bounds values : %llu %s\n",
                                      static_cast<unsigned long long>(totalWrong), totalWrong == 0 ? "OK" : "FAILED") +
                    detail::formatted("# Worst default/best   : %.2f at %zu bytes\n", worstRatio, worstBytes);
  if (tunedWorstRatio >= 0) {
    out += detail::formatted("# Worst autotune/best  : %.2f at %zu bytes\n", tunedWorstRatio, tunedWorstBytes);
  }
  return out + "#\n";
}

inline std::string csvHeader() {
  return "collective,ranks,bytes,count,type,op,root,oop_time_us,oop_algbw_gbs,oop_busbw_gbs,oop_wrong,"
         "ip_time_us,ip_algbw_gbs,ip_busbw_gbs,ip_wrong,algorithm\n";
}

// One CSV line for r (an unchecked #wrong is an empty field).
inline std::string csvRecord(const SizeRecord& r) {
  auto mode = [](const ModeResult& m) {
    return detail::formatted(",%.3f,%.4f,%.4f,", m.timeUs, m.algBandwidthGBs, m.busBandwidthGBs) +
           (m.wrong ? std::to_string(*m.wrong) : std::string());
  };
  return detail::formatted("%s,%d,%zu,%zu,%s,%s,%d", std::string(r.collective).c_str(), r.nranks, r.bytes, r.count,
                           std::string(r.type).c_str(), std::string(r.op).c_str(), r.root) +
         mode(r.outOfPlace) + (r.hasInPlace ? mode(r.inPlace) : std::string(",,,,")) + "," +
         std::string(r.algorithm) + "\n";
}

// One JSON object for r, on one line without a trailing comma (an unchecked #wrong is null).
inline std::string jsonRecord(const SizeRecord& r) {
  auto mode = [](const char* prefix, const ModeResult& m) {
    return detail::formatted(", \"%s_time_us\": %.3f, \"%s_algbw_gbs\": %.4f, \"%s_busbw_gbs\": %.4f, \"%s_wrong\": ",
                             prefix, m.timeUs, prefix, m.algBandwidthGBs, prefix, m.busBandwidthGBs, prefix) +
           (m.wrong ? std::to_string(*m.wrong) : std::string("null"));
  };
  return detail::formatted(
             "{\"collective\": \"%s\", \"ranks\": %d, \"bytes\": %zu, \"count\": %zu, \"type\": \"%s\", \"op\": "
             "\"%s\", \"root\": %d",
             std::string(r.collective).c_str(), r.nranks, r.bytes, r.count, std::string(r.type).c_str(),
             std::string(r.op).c_str(), r.root) +
         mode("oop", r.outOfPlace) +
         (r.hasInPlace ? mode("ip", r.inPlace)
                       : std::string(", \"ip_time_us\": null, \"ip_algbw_gbs\": null, \"ip_busbw_gbs\": null, "
                                     "\"ip_wrong\": null")) +
         ", \"algorithm\": \"" + std::string(r.algorithm) + "\"}";
}

}  // namespace chorus::perf
