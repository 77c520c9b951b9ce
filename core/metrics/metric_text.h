// Prometheus's text exposition format (version 0.0.4), written by hand: samples are grouped under their family's
// HELP and TYPE lines whatever order the sources add them in, label values and help texts are escaped, and a
// histogram is written as its cumulative buckets, +Inf, _sum and _count.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace chorus::metrics {

// The Content-Type of what MetricText writes.
inline constexpr const char* kTextContentType = "text/plain; version=0.0.4; charset=utf-8";

// A series' labels, in the order they are written: name (a valid label name) and value (any text).
using Labels = std::vector<std::pair<std::string, std::string>>;

class MetricText {
 public:
  // A counter or gauge sample of family `name` (created at its first sample with `help`).
  void counter(std::string_view name, std::string_view help, const Labels& labels, double value);
  void gauge(std::string_view name, std::string_view help, const Labels& labels, double value);
  // A histogram: `bounds` the upper bounds in ascending order, `counts` one per bound plus the overflow (not
  // cumulative: each observation counted once, in the first bucket whose bound holds it), `sum` of the observations.
  void histogram(std::string_view name, std::string_view help, const Labels& labels, std::span<const double> bounds,
                 std::span<const uint64_t> counts, double sum);
  // Every family, each with its HELP and TYPE lines, in the order of their first samples.
  std::string text() const;

  // `value` with \, " and newline escaped (a label value's rules).
  static std::string escapeLabelValue(std::string_view value);
  // `help` with \ and newline escaped (a HELP line's rules).
  static std::string escapeHelp(std::string_view help);
  // A sample value: shortest round-trip decimal, +Inf, -Inf or NaN.
  static std::string formatValue(double value);

 private:
  struct Family {
    std::string name, help, type;
    std::string samples;  // its sample lines
  };
  Family& family(std::string_view name, std::string_view help, const char* type);
  static void appendSample(std::string& out, std::string_view name, const Labels& labels, double value,
                           const std::pair<std::string, std::string>* extra = nullptr);

  std::vector<Family> families_;
};

}  // namespace chorus::metrics
