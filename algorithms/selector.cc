#include "algorithms/selector.h"

#include "core/datatype.h"

namespace chorus {

size_t selectionBytes(const CallArgs& op, int nranks) {
  size_t bytes = op.count * typeSize(op.type);
  switch (op.collective) {
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kAllToAll:
    case Collective::kGather:
    case Collective::kScatter: return bytes * static_cast<size_t>(nranks);
    // Each rank's alltoallv sizes differ while every rank must choose alike: its choice cannot depend on them.
    case Collective::kAllToAllv:
    case Collective::kBarrier: return 0;
    default: return bytes;
  }
}

Selector::Selector(const std::string& rules, const CostInputs& inputs)
    : rules_(AlgoRules::parse(rules)),
      perCallRules_(rules_.perCall()),
      table_(inputs, rules_),
      intraHost_(hostLevel(inputs), AlgoRules()),
      interHost_(leaderLevel(inputs, Collective::kBroadcast), AlgoRules()),
      leadersAllReduce_(leaderLevel(inputs, Collective::kAllReduce), AlgoRules()) {}

AlgorithmChoice Selector::choose(const CallArgs& op, int nranks) const {
  const size_t bytes = selectionBytes(op, nranks);
  if (perCallRules_) {
    if (const std::optional<AlgoRule> rule = rules_.lookup(op.collective, bytes, static_cast<int>(typeSize(op.type)))) {
      return {rule->algorithm, findAlgorithm(op.collective, rule->algorithm)->run, rule->sliceBytes, rule->sockets};
    }
  }
  const DecisionRow& row = table_.lookup(op.collective, bytes);
  return {row.algorithm, row.run};
}

AlgorithmChoice Selector::chooseLevel(const CallArgs& op, int groupSize, bool acrossHosts) const {
  const DecisionTable& level = !acrossHosts                                ? intraHost_
                               : op.collective == Collective::kAllReduce ? leadersAllReduce_
                                                                         : interHost_;
  const DecisionRow& row = level.lookup(op.collective, selectionBytes(op, groupSize));
  return {row.algorithm, row.run};
}

}  // namespace chorus
