// Prometheus's text format as MetricText writes it: families grouped, escaping, histograms' cumulative buckets.
#include "core/metrics/metric_text.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>

#include "core/metrics/duration_histogram.h"

namespace chorus::metrics {
namespace {

TEST(MetricTextTest, EscapesLabelValuesAndHelp) {
  EXPECT_EQ(MetricText::escapeLabelValue(R"(a\b"c)"
                                         "\n"
                                         "d"),
            R"(a\\b\"c\nd)");
  EXPECT_EQ(MetricText::escapeHelp("back\\slash \"quoted\"\nline"), "back\\\\slash \"quoted\"\\nline");
  MetricText t;
  t.counter("x_total", "help", {{"name", "say \"hi\"\\n"}}, 1);
  EXPECT_EQ(t.text(), "# HELP x_total help\n# TYPE x_total counter\nx_total{name=\"say \\\"hi\\\"\\\\n\"} 1\n");
}

TEST(MetricTextTest, GroupsSamplesUnderOneHelpAndTypePerFamily) {
  MetricText t;
  t.counter("a_total", "A.", {{"rank", "0"}}, 3);
  t.gauge("b", "B.", {}, 0.5);
  t.counter("a_total", "A.", {{"rank", "1"}}, 4);
  EXPECT_EQ(t.text(),
            "# HELP a_total A.\n# TYPE a_total counter\na_total{rank=\"0\"} 3\na_total{rank=\"1\"} 4\n"
            "# HELP b B.\n# TYPE b gauge\nb 0.5\n");
}

TEST(MetricTextTest, FormatsValues) {
  EXPECT_EQ(MetricText::formatValue(12345678901234.0), "12345678901234");
  EXPECT_EQ(MetricText::formatValue(1e-06), "1e-06");
  EXPECT_EQ(MetricText::formatValue(2.5), "2.5");
  EXPECT_EQ(MetricText::formatValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(MetricText::formatValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(MetricText::formatValue(std::nan("")), "NaN");
}

TEST(MetricTextTest, HistogramBucketsAreCumulativeWithInfSumAndCount) {
  MetricText t;
  const std::array<double, 2> bounds = {0.001, 0.01};
  const std::array<uint64_t, 3> counts = {2, 3, 1};  // 1 over the last bound
  t.histogram("d_seconds", "D.", {{"op", "x"}}, bounds, counts, 0.25);
  EXPECT_EQ(t.text(),
            "# HELP d_seconds D.\n# TYPE d_seconds histogram\n"
            "d_seconds_bucket{op=\"x\",le=\"0.001\"} 2\n"
            "d_seconds_bucket{op=\"x\",le=\"0.01\"} 5\n"
            "d_seconds_bucket{op=\"x\",le=\"+Inf\"} 6\n"
            "d_seconds_sum{op=\"x\"} 0.25\n"
            "d_seconds_count{op=\"x\"} 6\n");
}

TEST(DurationHistogramTest, PutsEachDurationInTheFirstBucketThatHoldsIt) {
  DurationHistogram h;
  h.observe(500);             // 0.5 us: the 1 us bucket
  h.observe(1000);            // 1 us exactly: still the 1 us bucket (le is "less or equal")
  h.observe(1001);            // the 2 us bucket
  h.observe(61'000'000'000);  // 61 s: over the last bound
  const auto counts = h.counts();
  EXPECT_EQ(counts[0], 2u);
  EXPECT_EQ(counts[1], 1u);
  EXPECT_EQ(counts[DurationHistogram::kBounds], 1u);
  EXPECT_NEAR(h.sumSeconds(), 61.0000025, 1e-9);
  const auto& bounds = DurationHistogram::boundsSeconds();
  EXPECT_EQ(MetricText::formatValue(bounds.front()), "1e-06");
  EXPECT_EQ(MetricText::formatValue(bounds.back()), "60");
  for (size_t i = 1; i < bounds.size(); ++i) EXPECT_LT(bounds[i - 1], bounds[i]);
}

}  // namespace
}  // namespace chorus::metrics
