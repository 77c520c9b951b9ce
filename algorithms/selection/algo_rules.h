// CHORUS_ALGO: which algorithm to use, by collective and size range, in the syntax the defaults print in:
//   ring                                     every collective that has a ring, and broadcast's and reduce's chain
//   allreduce:0-64K=halving_doubling,64K-inf=ring;broadcast:tree
//   allreduce.16:1M-inf=ring@2M                calls on 16-bit elements only; slices of 2M instead of CHORUS_CHUNK_SIZE
//   allreduce:256K-4M=ring/2                   TCP messages of these calls striped over 2 sockets per rail
// Sizes are bytes as nccl-tests counts them (K, M, G suffixes; "inf"); ranges are [lo, hi). Later rules win. A
// collective's ".BITS" suffix (8, 16, 32, 64) limits its rules to calls on elements of that width, "@SIZE" after
// an algorithm sets the slice size of its pipelines (as CHORUS_CHUNK_SIZE does for the whole communicator), and
// "/N" after that the sockets per rail its TCP messages stripe over (as CHORUS_NSOCKS does, up to the sockets the
// pair has): the syntax the autotuner writes its table in (CHORUS_AUTOTUNE_FILE).
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
  int elementBytes = 0;                  // 0: calls on any datatype; else only on elements of this many bytes
  size_t lo = 0, hi = SIZE_MAX;          // SIZE_MAX: no upper bound
  // As named; what runs for collective c is algorithmFor(c, algorithm) ("ring" names broadcast's chain too).
  AlgorithmId algorithm = AlgorithmId::kRing;
  size_t sliceBytes = 0;                 // 0: the communicator's slice size (CHORUS_CHUNK_SIZE)
  int sockets = 0;                       // 0: the pairs' own stripe width (CHORUS_NSOCKS); else sockets per rail
};

class AlgoRules {
 public:
  // Parses `text`; throws chorusInvalidArgument naming the knob, the offending piece and what was expected.
  static AlgoRules parse(std::string_view text);
  // The rule that chooses for this call, its algorithm the one it names for `c` (algorithmFor: "ring" is the chain
  // of broadcast and reduce); none when no rule covers the call or its algorithm lacks the collective.
  // elementBytes 0 (the width is not known): only rules for every width apply.
  std::optional<AlgoRule> lookup(Collective c, size_t bytes, int elementBytes = 0) const;
  // Whether some rule needs the call itself to decide: one limited to a width, or one with a slice size.
  bool perCall() const;
  const std::vector<AlgoRule>& rules() const { return rules_; }
  bool empty() const { return rules_.empty(); }

 private:
  std::vector<AlgoRule> rules_;
};

// The most sockets per rail a rule may name (a pair has at most 16 sockets).
inline constexpr int kMaxRuleSockets = 16;
// The smallest and largest slice a rule (and CHORUS_CHUNK_SIZE) may set.
inline constexpr size_t kMinSliceBytes = 4096, kMaxSliceBytes = size_t{64} << 20;

// "0", "512", "64K", "4M", "1G", "inf": the shortest exact form.
std::string formatSize(size_t bytes);
// The collective called `name` ("allreduce", ...), if any.
std::optional<Collective> collectiveNamed(std::string_view name);

}  // namespace chorus
