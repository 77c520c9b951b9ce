#include "perf/chorus_topo/cluster_prediction.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <nlohmann/json.hpp>

#include "algorithms/algorithm_registry.h"
#include "algorithms/selection/algo_rules.h"
#include "algorithms/selection/decision_table.h"
#include "perf/chorus_perf/collective_layout.h"

namespace chorus::topo {

namespace {

// busbw per algbw: chorus-perf's factor (nccl-tests'), found through the collective's name.
double busFactor(Collective c, int n) {
  const auto perfCollective = perf::parseCollective(collectiveName(c));
  return perfCollective ? perf::busBandwidthFactor(*perfCollective, n) : 1.0;
}

struct Prediction {
  std::vector<std::pair<AlgorithmId, double>> us;  // every algorithm the model can price here
  AlgorithmId selected = AlgorithmId::kRing;
};

Prediction predict(const CostInputs& in, const DecisionTable& table, Collective c, size_t bytes) {
  Prediction p;
  for (const AlgorithmRecord& r : algorithmRegistry()) {
    if (r.collective != c) continue;
    const double us = r.cost(c, bytes, in);
    if (std::isfinite(us)) p.us.emplace_back(r.id, us);
  }
  p.selected = table.lookup(c, bytes).algorithm;
  return p;
}

double busbwGBs(Collective c, int n, size_t bytes, double us) {
  return us > 0 ? bytes / (us * 1e-6) * busFactor(c, n) / 1e9 : 0;
}

void printText(std::ostream& out, const ClusterSpec& cluster, const PredictRequest& r) {
  for (int n : r.ranks) {
    const CostInputs in = cluster.inputsFor(n);
    const DecisionTable table(in, AlgoRules{});
    for (Collective c : r.collectives) {
      std::vector<AlgorithmId> algos;
      for (const AlgorithmRecord& rec : algorithmRegistry()) {
        if (rec.collective == c) algos.push_back(rec.id);
      }
      out << "\n# " << collectiveName(c) << ", " << n << " ranks (" << in.nhosts << " hosts x " << in.maxRanksPerHost
          << "): predicted us per call\n#" << std::setw(13) << "size (B)";
      for (AlgorithmId a : algos) out << std::setw(20) << algorithmName(a);
      out << std::setw(20) << "selected" << std::setw(12) << "busbw GB/s" << "\n";
      for (size_t bytes : r.sizes) {
        const Prediction p = predict(in, table, c, bytes);
        out << std::setw(14) << bytes;
        double selectedUs = 0;
        for (AlgorithmId a : algos) {
          auto it = std::find_if(p.us.begin(), p.us.end(), [&](const auto& e) { return e.first == a; });
          if (it == p.us.end()) {
            out << std::setw(20) << "-";
          } else {
            out << std::setw(20) << std::setprecision(4) << it->second;
          }
          if (a == p.selected && it != p.us.end()) selectedUs = it->second;
        }
        out << std::setw(20) << algorithmName(p.selected) << std::setw(12) << std::setprecision(4)
            << busbwGBs(c, n, bytes, selectedUs) << "\n";
      }
    }
  }
}

void printJson(std::ostream& out, const ClusterSpec& cluster, const PredictRequest& r) {
  nlohmann::ordered_json doc;
  doc["cluster"] = cluster.name;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (int n : r.ranks) {
    const CostInputs in = cluster.inputsFor(n);
    const DecisionTable table(in, AlgoRules{});
    for (Collective c : r.collectives) {
      for (size_t bytes : r.sizes) {
        const Prediction p = predict(in, table, c, bytes);
        nlohmann::ordered_json row, algos = nlohmann::ordered_json::object(), bus = nlohmann::ordered_json::object();
        for (const auto& [a, us] : p.us) {
          algos[algorithmName(a)] = us;
          bus[algorithmName(a)] = busbwGBs(c, n, bytes, us);
        }
        row["ranks"] = n;
        row["hosts"] = in.nhosts;
        row["collective"] = collectiveName(c);
        row["bytes"] = bytes;
        row["algorithms"] = std::move(algos);
        row["busbw_gbs"] = std::move(bus);
        row["selected"] = algorithmName(p.selected);
        rows.push_back(std::move(row));
      }
    }
  }
  doc["predictions"] = std::move(rows);
  out << doc.dump(1) << "\n";
}

}  // namespace

PredictRequest withDefaults(PredictRequest r) {
  if (r.ranks.empty()) {
    for (int n = 8; n <= 16384; n *= 2) r.ranks.push_back(n);
  }
  if (r.collectives.empty()) r.collectives.push_back(Collective::kAllReduce);
  if (r.sizes.empty()) {
    for (size_t b = 8; b <= (size_t{1} << 30); b *= 8) r.sizes.push_back(b);
  }
  return r;
}

void printPredictions(std::ostream& out, const ClusterSpec& cluster, const PredictRequest& request) {
  if (request.json) {
    printJson(out, cluster, request);
  } else {
    printText(out, cluster, request);
  }
}

}  // namespace chorus::topo
