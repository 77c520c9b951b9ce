#include "algorithms/algorithm_table.h"

#include "algorithms/algorithms.h"
#include "algorithms/hierarchical/hierarchical.h"

namespace chorus {

const std::vector<AlgorithmEntry>& algorithmTable() {
  static const std::vector<AlgorithmEntry> table = {
      {Collective::kAllReduce, "ring", ringAllReduce},
      {Collective::kAllReduce, "recursive_doubling", recursiveDoublingAllReduce},
      {Collective::kAllReduce, "tree", treeAllReduce},
      {Collective::kAllReduce, "halving_doubling", halvingDoublingAllReduce},
      {Collective::kBroadcast, "ring", chainBroadcast},
      {Collective::kBroadcast, "tree", treeBroadcast},
      {Collective::kBroadcast, "halving_doubling", halvingDoublingBroadcast},
      {Collective::kReduce, "ring", chainReduce},
      {Collective::kReduce, "tree", treeReduce},
      {Collective::kReduce, "halving_doubling", halvingDoublingReduce},
      {Collective::kAllGather, "ring", ringAllGather},
      {Collective::kAllGather, "halving_doubling", halvingDoublingAllGather},
      {Collective::kReduceScatter, "ring", ringReduceScatter},
      {Collective::kReduceScatter, "halving_doubling", halvingDoublingReduceScatter},
      {Collective::kAllReduce, "hierarchical", hierarchicalAllReduce},
      {Collective::kBroadcast, "hierarchical", hierarchicalBroadcast},
      {Collective::kReduce, "hierarchical", hierarchicalReduce},
  };
  return table;
}

AlgorithmFn findAlgorithm(Collective c, std::string_view name) {
  for (const auto& e : algorithmTable()) {
    if (e.collective == c && name == e.name) return e.run;
  }
  return nullptr;
}

bool isAlgorithmName(std::string_view name) {
  for (const auto& e : algorithmTable()) {
    if (name == e.name) return true;
  }
  return false;
}

}  // namespace chorus
