#include "algorithms/selector.h"

#include "core/datatype.h"

namespace chorus {

size_t selectionBytes(const Op& op, int nranks) {
  size_t bytes = op.count * typeSize(op.type);
  if (op.collective == Collective::kAllGather || op.collective == Collective::kReduceScatter) bytes *= nranks;
  return bytes;
}

Selector::Selector(const std::string& rules, const CostInputs& inputs) : table_(inputs, AlgoRules::parse(rules)) {}

AlgorithmChoice Selector::choose(const Op& op, int nranks) const {
  const DecisionRow& row = table_.lookup(op.collective, selectionBytes(op, nranks));
  return {row.algorithm.c_str(), row.run};
}

}  // namespace chorus
