#include "algorithms/algorithm_registry.h"

#include <array>

#include "algorithms/algorithms.h"
#include "algorithms/hierarchical/hierarchical.h"

namespace chorus {
namespace {

// The cost model's prediction for algorithm A.
template <AlgorithmId A>
double costOf(Collective c, size_t bytes, const CostInputs& in) {
  return predictUs(c, A, bytes, in);
}

using A = AlgorithmId;
using C = Collective;

}  // namespace

const char* algorithmName(AlgorithmId id) {
  switch (id) {
    case A::kRing: return "ring";
    case A::kRecursiveDoubling: return "recursive_doubling";
    case A::kTree: return "tree";
    case A::kHalvingDoubling: return "halving_doubling";
    case A::kHierarchical: return "hierarchical";
    case A::kPairwise: return "pairwise";
    case A::kBruck: return "bruck";
    case A::kDirect: return "direct";
    case A::kBinomial: return "binomial";
    case A::kDissemination: return "dissemination";
    case A::kChain: return "chain";
  }
  return "unknown";
}

std::optional<AlgorithmId> algorithmNamed(std::string_view name) {
  for (AlgorithmId id : kAllAlgorithms) {
    if (name == algorithmName(id)) return id;
  }
  return std::nullopt;
}

const std::vector<AlgorithmRecord>& algorithmRegistry() {
  static const std::vector<AlgorithmRecord> records = {
      {A::kRing, C::kAllReduce, ringAllReduce, costOf<A::kRing>, true},
      {A::kRecursiveDoubling, C::kAllReduce, recursiveDoublingAllReduce, costOf<A::kRecursiveDoubling>, true},
      {A::kTree, C::kAllReduce, treeAllReduce, costOf<A::kTree>, true},
      {A::kHalvingDoubling, C::kAllReduce, halvingDoublingAllReduce, costOf<A::kHalvingDoubling>, true},
      {A::kChain, C::kBroadcast, chainBroadcast, costOf<A::kChain>, true},
      {A::kTree, C::kBroadcast, treeBroadcast, costOf<A::kTree>, true},
      {A::kHalvingDoubling, C::kBroadcast, halvingDoublingBroadcast, costOf<A::kHalvingDoubling>, true},
      {A::kChain, C::kReduce, chainReduce, costOf<A::kChain>, true},
      {A::kTree, C::kReduce, treeReduce, costOf<A::kTree>, true},
      {A::kHalvingDoubling, C::kReduce, halvingDoublingReduce, costOf<A::kHalvingDoubling>, true},
      {A::kRing, C::kAllGather, ringAllGather, costOf<A::kRing>, true},
      {A::kHalvingDoubling, C::kAllGather, halvingDoublingAllGather, costOf<A::kHalvingDoubling>, true},
      {A::kRing, C::kReduceScatter, ringReduceScatter, costOf<A::kRing>, true},
      {A::kHalvingDoubling, C::kReduceScatter, halvingDoublingReduceScatter, costOf<A::kHalvingDoubling>, true},
      {A::kHierarchical, C::kAllReduce, hierarchicalAllReduce, costOf<A::kHierarchical>, false},
      {A::kHierarchical, C::kBroadcast, hierarchicalBroadcast, costOf<A::kHierarchical>, false},
      {A::kHierarchical, C::kReduce, hierarchicalReduce, costOf<A::kHierarchical>, false},
      {A::kPairwise, C::kAllToAll, pairwiseAllToAll, costOf<A::kPairwise>, true},
      {A::kHierarchical, C::kAllToAll, hierarchicalAllToAll, costOf<A::kHierarchical>, false},
      {A::kBruck, C::kAllToAll, bruckAllToAll, costOf<A::kBruck>, true},
      {A::kPairwise, C::kAllToAllv, pairwiseAllToAllv, costOf<A::kPairwise>, true},
      {A::kDirect, C::kGather, directGather, costOf<A::kDirect>, true},
      {A::kBinomial, C::kGather, binomialGather, costOf<A::kBinomial>, true},
      {A::kDirect, C::kScatter, directScatter, costOf<A::kDirect>, true},
      {A::kBinomial, C::kScatter, binomialScatter, costOf<A::kBinomial>, true},
      {A::kDissemination, C::kBarrier, disseminationBarrier, costOf<A::kDissemination>, true},
  };
  return records;
}

const AlgorithmRecord* findAlgorithm(Collective c, AlgorithmId id) {
  for (const AlgorithmRecord& r : algorithmRegistry()) {
    if (r.collective == c && r.id == id) return &r;
  }
  return nullptr;
}

AlgorithmId algorithmFor(Collective c, AlgorithmId named) {
  if (named == A::kRing && !findAlgorithm(c, A::kRing) && findAlgorithm(c, A::kChain)) return A::kChain;
  return named;
}

}  // namespace chorus
