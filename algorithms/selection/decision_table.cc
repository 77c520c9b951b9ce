#include "algorithms/selection/decision_table.h"

#include <cmath>
#include <iomanip>
#include <limits>
#include <sstream>

#include "core/error.h"

namespace chorus {
namespace {

constexpr int kMaxLog2 = 30;  // the last row, from 1 GiB, runs to infinity

// The cheapest algorithm at `bytes` (the first in table order on ties), and its predicted time.
std::pair<const AlgorithmRecord*, double> cheapest(Collective c, size_t bytes, const CostInputs& in) {
  const AlgorithmRecord* best = nullptr;
  double bestUs = std::numeric_limits<double>::infinity();
  for (const AlgorithmRecord& r : algorithmRegistry()) {
    if (r.collective != c) continue;
    double us = r.cost(c, bytes, in);
    if (!best || us < bestUs) {
      best = &r;
      bestUs = us;
    }
  }
  if (!best) throwInternal(std::string("no algorithm for ") + collectiveName(c));
  return {best, bestUs};
}

std::string formatUs(double us) {
  std::ostringstream s;
  if (!std::isfinite(us)) return "-";
  s << std::fixed << std::setprecision(us < 10 ? 2 : us < 1000 ? 1 : 0) << us;
  return s.str();
}

}  // namespace

DecisionTable::DecisionTable(const CostInputs& inputs, const AlgoRules& rules) {
  for (Collective c : kAllCollectives) {
    for (int k = -1; k <= kMaxLog2; ++k) {
      const size_t lo = k < 0 ? 0 : size_t{1} << k;
      const size_t hi = k == kMaxLog2 ? SIZE_MAX : size_t{1} << (k + 1);
      DecisionRow row;
      row.collective = c;
      row.lo = lo;
      row.hi = hi;
      if (const std::optional<AlgoRule> forced = rules.lookup(c, lo)) {
        const AlgorithmRecord* record = findAlgorithm(c, forced->algorithm);
        row.algorithm = record->id;
        row.run = record->run;
        row.forced = true;
        row.predictedLoUs = record->cost(c, lo, inputs);
      } else {
        auto [record, us] = cheapest(c, lo, inputs);
        row.algorithm = record->id;
        row.run = record->run;
        row.predictedLoUs = us;
      }
      row.predictedHiUs = row.predictedLoUs;
      DecisionRow* last = rows_.empty() ? nullptr : &rows_.back();
      if (last && last->collective == c && last->algorithm == row.algorithm && last->forced == row.forced) {
        last->hi = row.hi;
        last->predictedHiUs = row.predictedLoUs;
      } else {
        rows_.push_back(std::move(row));
      }
    }
  }
}

const DecisionRow& DecisionTable::lookup(Collective c, size_t bytes) const {
  for (const auto& r : rows_) {
    if (r.collective == c && bytes >= r.lo && bytes < r.hi) return r;
  }
  throwInternal(std::string("decision table has no row for ") + collectiveName(c) + " of " + std::to_string(bytes));
}

std::string DecisionTable::asRules() const {
  std::string out;
  const DecisionRow* prev = nullptr;
  for (const auto& r : rows_) {
    bool first = !prev || prev->collective != r.collective;
    if (first) out += std::string(out.empty() ? "" : ";") + collectiveName(r.collective) + ":";
    out += std::string(first ? "" : ",") + formatSize(r.lo) + "-" + formatSize(r.hi) + "=" + algorithmName(r.algorithm);
    prev = &r;
  }
  return out;
}

void DecisionTable::print(std::ostream& out) const {
  out << std::left << std::setw(14) << "collective" << std::setw(16) << "bytes" << std::setw(20) << "algorithm"
      << "predicted us (at lo .. near hi)\n";
  for (const auto& r : rows_) {
    out << std::left << std::setw(14) << collectiveName(r.collective) << std::setw(16)
        << (formatSize(r.lo) + "-" + formatSize(r.hi)) << std::setw(20) << algorithmName(r.algorithm)
        << formatUs(r.predictedLoUs) << " .. " << formatUs(r.predictedHiUs) << (r.forced ? "  (CHORUS_ALGO)" : "")
        << "\n";
  }
}

}  // namespace chorus
