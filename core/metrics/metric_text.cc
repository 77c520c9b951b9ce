#include "core/metrics/metric_text.h"

#include <charconv>
#include <cmath>

namespace chorus::metrics {

void MetricText::counter(std::string_view name, std::string_view help, const Labels& labels, double value) {
  appendSample(family(name, help, "counter").samples, name, labels, value);
}

void MetricText::gauge(std::string_view name, std::string_view help, const Labels& labels, double value) {
  appendSample(family(name, help, "gauge").samples, name, labels, value);
}

void MetricText::histogram(std::string_view name, std::string_view help, const Labels& labels,
                           std::span<const double> bounds, std::span<const uint64_t> counts, double sum) {
  std::string& out = family(name, help, "histogram").samples;
  const std::string bucket = std::string(name) + "_bucket";
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= bounds.size(); ++i) {
    cumulative += i < counts.size() ? counts[i] : 0;
    const std::pair<std::string, std::string> le{"le", i < bounds.size() ? formatValue(bounds[i]) : "+Inf"};
    appendSample(out, bucket, labels, static_cast<double>(cumulative), &le);
  }
  // _count is the +Inf bucket by construction, so a scrape never shows them apart.
  appendSample(out, std::string(name) + "_sum", labels, sum);
  appendSample(out, std::string(name) + "_count", labels, static_cast<double>(cumulative));
}

std::string MetricText::text() const {
  std::string out;
  for (const Family& f : families_) {
    out += "# HELP " + f.name + " " + escapeHelp(f.help) + "\n";
    out += "# TYPE " + f.name + " " + f.type + "\n";
    out += f.samples;
  }
  return out;
}

namespace {
// The text format's escapes: backslash and newline everywhere, the double quote inside label values only.
std::string escaped(std::string_view text, bool quotes) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"' && quotes) {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}
}  // namespace

std::string MetricText::escapeLabelValue(std::string_view value) { return escaped(value, true); }

std::string MetricText::escapeHelp(std::string_view help) { return escaped(help, false); }

std::string MetricText::formatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof(buf), value);
  return std::string(buf, result.ptr);
}

MetricText::Family& MetricText::family(std::string_view name, std::string_view help, const char* type) {
  for (Family& f : families_) {
    if (f.name == name) return f;
  }
  families_.push_back(Family{std::string(name), std::string(help), type, {}});
  return families_.back();
}

void MetricText::appendSample(std::string& out, std::string_view name, const Labels& labels, double value,
                              const std::pair<std::string, std::string>* extra) {
  out += name;
  if (!labels.empty() || extra != nullptr) {
    out += '{';
    bool first = true;
    auto add = [&](const std::pair<std::string, std::string>& label) {
      if (!first) out += ',';
      first = false;
      out += label.first + "=\"" + escapeLabelValue(label.second) + "\"";
    };
    for (const auto& label : labels) add(label);
    if (extra != nullptr) add(*extra);
    out += '}';
  }
  out += ' ';
  out += formatValue(value);
  out += '\n';
}

}  // namespace chorus::metrics
