// The algorithms, by number. Inside the library an algorithm is its id; its name exists only at the edges
// (CHORUS_ALGO and config algo strings, chorus-topo and chorus-perf, logs).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace chorus {

enum class AlgorithmId : uint8_t {
  kRing,
  kRecursiveDoubling,
  kTree,
  kHalvingDoubling,
  kHierarchical,
  kPairwise,
  kBruck,
  kDirect,
  kBinomial,
  kDissemination,
  kChain,  // broadcast's and reduce's pipelined chain (NCCL calls it their ring)
};
inline constexpr AlgorithmId kAllAlgorithms[] = {
    AlgorithmId::kRing,         AlgorithmId::kRecursiveDoubling, AlgorithmId::kTree,  AlgorithmId::kHalvingDoubling,
    AlgorithmId::kHierarchical, AlgorithmId::kPairwise,          AlgorithmId::kBruck, AlgorithmId::kDirect,
    AlgorithmId::kBinomial,     AlgorithmId::kDissemination,     AlgorithmId::kChain};

// "ring", "recursive_doubling", "tree", "halving_doubling", "hierarchical", "pairwise", "bruck", "direct",
// "binomial", "dissemination", "chain".
const char* algorithmName(AlgorithmId id);
// The algorithm called `name`, if any. "ring" is the ring's name alone: where a collective has a chain and no ring,
// algorithmFor (algorithm_registry.h) reads it as the chain.
std::optional<AlgorithmId> algorithmNamed(std::string_view name);

}  // namespace chorus
