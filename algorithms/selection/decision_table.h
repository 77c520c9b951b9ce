// The selector's defaults: for each collective, the algorithm the cost model predicts fastest per size range,
// printable as a table (chorus-topo, CHORUS_DEBUG=INFO) and in CHORUS_ALGO syntax.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "algorithms/algorithm_registry.h"
#include "algorithms/selection/algo_rules.h"
#include "algorithms/selection/cost_model.h"

namespace chorus {

struct DecisionRow {
  Collective collective;
  size_t lo = 0, hi = SIZE_MAX;  // [lo, hi) in nccl-tests bytes
  AlgorithmId algorithm = AlgorithmId::kRing;
  AlgorithmFn run = nullptr;
  double predictedLoUs = 0, predictedHiUs = 0;  // at lo, and at the last power of two below hi
  bool forced = false;                           // from CHORUS_ALGO rather than the model
};

class DecisionTable {
 public:
  // Evaluates the model at 0 and every power of two up to 1 GiB; `rules` override it where they apply.
  DecisionTable(const CostInputs& inputs, const AlgoRules& rules);
  // The row covering `bytes` of collective `c` (there always is one).
  const DecisionRow& lookup(Collective c, size_t bytes) const;
  const std::vector<DecisionRow>& rows() const { return rows_; }
  // The whole table in CHORUS_ALGO syntax ("allreduce:0-64K=recursive_doubling,64K-inf=ring;...").
  std::string asRules() const;
  // One line per row: collective, size range, algorithm, predicted time, and whether it was forced.
  void print(std::ostream& out) const;

 private:
  std::vector<DecisionRow> rows_;  // grouped by collective, ascending ranges covering [0, inf)
};

}  // namespace chorus
