// The only place that decides which algorithm runs for a call: CHORUS_ALGO rules where they apply, else the
// cost model's choice for this world (see selection/decision_table.h).
#pragma once

#include <string>

#include "algorithms/algorithm_table.h"
#include "core/collective.h"
#include "algorithms/selection/decision_table.h"

namespace chorus {

struct AlgorithmChoice {
  const char* name;
  AlgorithmFn run;
};

class Selector {
 public:
  // rules: CHORUS_ALGO text ("" = the model decides everything). Throws chorusInvalidArgument on bad rules.
  Selector(const std::string& rules, const CostInputs& inputs);
  AlgorithmChoice choose(const Op& op, int nranks) const;
  const DecisionTable& table() const { return table_; }

 private:
  DecisionTable table_;
};

// The size the selector and CHORUS_ALGO ranges see for a call: nccl-tests' "size" column.
size_t selectionBytes(const Op& op, int nranks);

}  // namespace chorus
