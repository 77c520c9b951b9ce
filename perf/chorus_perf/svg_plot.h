// A sweep's bus bandwidth against message size as a self-contained SVG (chorus-perf --plot FILE): no plotting
// library needed where the quick start runs. Log-2 size axis, linear bandwidth axis from 0, one line per mode.
// Pure formatting, so that tests/unit/perf_args_test.cc can pin it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "perf/chorus_perf/sweep_summary.h"

namespace chorus::perf {

namespace detail {

// A round axis top at or above `value` (1, 2 or 5 times a power of ten), and its tick step.
inline void niceAxis(double value, double* top, double* step) {
  if (!(value > 0)) value = 1;
  const double magnitude = std::pow(10.0, std::floor(std::log10(value)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * magnitude >= value) {
      *top = m * magnitude;
      *step = *top / (m == 1.0 || m == 10.0 ? 5 : m == 2.0 ? 4 : 5);
      return;
    }
  }
  *top = 10 * magnitude;
  *step = 2 * magnitude;
}

inline std::string svgEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else out += c;
  }
  return out;
}

}  // namespace detail

// The plot of rows (sizes ascending; rows of 0 bytes are left out) titled `title`.
inline std::string svgBandwidthPlot(const std::vector<SizeRecord>& rows, const std::string& title) {
  constexpr double kWidth = 780, kHeight = 440, kLeft = 70, kRight = 40, kTop = 40, kBottom = 60;
  const double plotW = kWidth - kLeft - kRight, plotH = kHeight - kTop - kBottom;
  std::vector<const SizeRecord*> points;
  double maxBw = 0;
  for (const SizeRecord& r : rows) {
    if (r.bytes == 0) continue;
    points.push_back(&r);
    maxBw = std::max({maxBw, r.outOfPlace.busBandwidthGBs, r.hasInPlace ? r.inPlace.busBandwidthGBs : 0.0});
  }
  const double lo = points.empty() ? 0 : std::log2(static_cast<double>(points.front()->bytes));
  const double hi = points.empty() ? 1 : std::max(lo + 1, std::log2(static_cast<double>(points.back()->bytes)));
  double top = 1, step = 0.2;
  detail::niceAxis(maxBw, &top, &step);
  auto x = [&](size_t bytes) { return kLeft + (std::log2(static_cast<double>(bytes)) - lo) / (hi - lo) * plotW; };
  auto y = [&](double gbs) { return kTop + plotH - gbs / top * plotH; };
  char buf[512];
  std::string out;
  std::snprintf(buf, sizeof(buf),
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" font-family=\"sans-serif\" "
                "font-size=\"12\">\n",
                kWidth, kHeight);
  out += buf;
  out += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  std::snprintf(buf, sizeof(buf), "<text x=\"%.0f\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">", kWidth / 2);
  out += buf + detail::svgEscape(title) + "</text>\n";
  // Bandwidth grid and labels.
  for (double v = 0; v <= top * 1.0001; v += step) {
    std::snprintf(buf, sizeof(buf),
                  "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                  "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
                  kLeft, y(v), kLeft + plotW, y(v), kLeft - 6, y(v) + 4, v);
    out += buf;
  }
  // Size labels at every other power of two of the sweep (every power when there are few).
  const int first = static_cast<int>(std::ceil(lo)), last = static_cast<int>(std::floor(hi));
  const int every = last - first > 12 ? 2 : 1;
  for (int e = first; e <= last; e += every) {
    const size_t bytes = size_t{1} << e;
    std::snprintf(buf, sizeof(buf),
                  "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>"
                  "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                  x(bytes), kTop, x(bytes), kTop + plotH, x(bytes), kTop + plotH + 18, humanBytes(bytes).c_str());
    out += buf;
  }
  std::snprintf(buf, sizeof(buf),
                "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#444\"/>\n"
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">message size (bytes per rank)</text>\n"
                "<text transform=\"translate(18,%.1f) rotate(-90)\" text-anchor=\"middle\">"
                "bus bandwidth (GB/s)</text>\n",
                kLeft, kTop, plotW, plotH, kLeft + plotW / 2, kHeight - 16, kTop + plotH / 2);
  out += buf;
  // One line per mode.
  struct Series {
    const char* name;
    const char* color;
    bool inPlace;
  };
  int legend = 0;
  for (const Series& s : {Series{"out-of-place", "#1f77b4", false}, Series{"in-place", "#ff7f0e", true}}) {
    std::string path;
    for (const SizeRecord* r : points) {
      if (s.inPlace && !r->hasInPlace) continue;
      const double bw = s.inPlace ? r->inPlace.busBandwidthGBs : r->outOfPlace.busBandwidthGBs;
      std::snprintf(buf, sizeof(buf), "%s%.1f,%.1f", path.empty() ? "" : " ", x(r->bytes), y(bw));
      path += buf;
    }
    if (path.empty()) continue;
    std::snprintf(buf, sizeof(buf), "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", s.color);
    out += buf + path + "\"/>\n";
    std::snprintf(buf, sizeof(buf),
                  "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>"
                  "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n",
                  kLeft + 12, kTop + 14 + 16.0 * legend, kLeft + 36, kTop + 14 + 16.0 * legend, s.color, kLeft + 42,
                  kTop + 18 + 16.0 * legend, s.name);
    out += buf;
    ++legend;
  }
  return out + "</svg>\n";
}

}  // namespace chorus::perf
