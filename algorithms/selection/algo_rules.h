// CHORUS_ALGO: which algorithm to use, by collective and size range, in the syntax the defaults print in:
//   ring                                     every collective that has a ring
//   allreduce:0-64K=halving_doubling,64K-inf=ring;broadcast:tree
// Sizes are bytes as nccl-tests counts them (K, M, G suffixes; "inf"); ranges are [lo, hi). Later rules win.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/algorithm_id.h"
#include "core/collective.h"

namespace chorus {

struct AlgoRule {
  std::optional<Collective> collective;  // none: every collective the algorithm implements
  size_t lo = 0, hi = SIZE_MAX;          // SIZE_MAX: no upper bound
  AlgorithmId algorithm = AlgorithmId::kRing;
};

class AlgoRules {
 public:
  // Parses `text`; throws chorusInvalidArgument naming the knob, the offending piece and what was expected.
  static AlgoRules parse(std::string_view text);
  // The algorithm the rules choose for this call (none when no rule covers it or the algorithm lacks it).
  std::optional<AlgorithmId> lookup(Collective c, size_t bytes) const;
  const std::vector<AlgoRule>& rules() const { return rules_; }
  bool empty() const { return rules_.empty(); }

 private:
  std::vector<AlgoRule> rules_;
};

// "0", "512", "64K", "4M", "1G", "inf": the shortest exact form.
std::string formatSize(size_t bytes);
// The collective called `name` ("allreduce", ...), if any.
std::optional<Collective> collectiveNamed(std::string_view name);

}  // namespace chorus
