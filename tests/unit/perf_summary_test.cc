// chorus-perf's summary below a sweep and its SVG plot (perf/chorus_perf/sweep_summary.h, svg_plot.h).
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "perf/chorus_perf/svg_plot.h"
#include "perf/chorus_perf/sweep_summary.h"

namespace chorus::perf {
namespace {

// The rows of a small allreduce sweep: 8 B to 32 KiB by 8x, bandwidth growing with size, two algorithms.
std::vector<SizeRecord> sweepRows() {
  std::vector<SizeRecord> rows;
  for (size_t bytes = 8; bytes <= 65536; bytes *= 8) {
    SizeRecord r;
    r.collective = "allreduce";
    r.nranks = 4;
    r.bytes = bytes;
    r.count = bytes / 4;
    r.outOfPlace = {10.0 + bytes / 1000.0, 0, bytes / 20000.0, 0};
    r.inPlace = {10.0 + bytes / 1000.0, 0, bytes / 10000.0, 0};
    r.algorithm = bytes < 4096 ? "recursive_doubling" : "ring";
    rows.push_back(r);
  }
  return rows;
}

TEST(PerfReport, SummaryNamesPeakLatencyTransportAndAlgorithms) {
  EXPECT_EQ(humanBytes(8), "8 B");
  EXPECT_EQ(humanBytes(65536), "64 KiB");
  EXPECT_EQ(humanBytes(64u << 20), "64 MiB");
  EXPECT_EQ(humanBytes(1000), "1000 B");
  EXPECT_EQ(formatSweepSummary(sweepRows(), "shm"),
            "# Summary\n"
            "#   peak bus bandwidth    : 3.28 GB/s at 32 KiB (in-place)\n"
            "#   small-message latency : 10.01 us at 8 B (out-of-place)\n"
            "#   transport             : shm\n"
            "#   algorithm             : recursive_doubling 8 B-512 B, ring 4 KiB-32 KiB\n");
  EXPECT_EQ(formatSweepSummary({}, "shm"), "");
  std::vector<SizeRecord> p2p = sweepRows();
  for (SizeRecord& r : p2p) r.algorithm = "";
  EXPECT_NE(formatSweepSummary(p2p, "").find("algorithm             : point-to-point\n"), std::string::npos);
  EXPECT_NE(formatSweepSummary(p2p, "").find("transport             : none (one rank)\n"), std::string::npos);
}

TEST(PerfReport, PlotIsAnSvgWithALinePerModeAndLabelledAxes) {
  const std::string svg = svgBandwidthPlot(sweepRows(), "allreduce <4 ranks>");
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  EXPECT_NE(svg.find("allreduce &lt;4 ranks&gt;"), std::string::npos);  // the title, escaped
  size_t lines = 0;
  for (size_t at = svg.find("<polyline"); at != std::string::npos; at = svg.find("<polyline", at + 1)) ++lines;
  EXPECT_EQ(lines, 2u);
  for (const char* label : {">8 B<", ">32 KiB<", ">out-of-place<", ">in-place<", "bus bandwidth (GB/s)"}) {
    EXPECT_NE(svg.find(label), std::string::npos) << label;
  }
  // The bandwidth axis tops at a round value at or above the peak (3.28 GB/s: 5).
  EXPECT_NE(svg.find(">5</text>"), std::string::npos);
  EXPECT_EQ(svg.find(">6</text>"), std::string::npos);
  // Every point lies inside the plot area (x 70..740, y 40..380).
  const size_t begin = svg.find("points=\"") + 8;
  std::istringstream points(svg.substr(begin, svg.find('"', begin) - begin));
  double x = 0, y = 0;
  char comma = 0;
  int seen = 0;
  while (points >> x >> comma >> y) {
    EXPECT_GE(x, 70.0);
    EXPECT_LE(x, 740.0);
    EXPECT_GE(y, 40.0);
    EXPECT_LE(y, 380.0);
    ++seen;
  }
  EXPECT_EQ(seen, 5);
}

}  // namespace
}  // namespace chorus::perf
