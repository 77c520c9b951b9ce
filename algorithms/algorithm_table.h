// Every algorithm Chorus has, per collective, under the name CHORUS_ALGO and chorus-topo use.
#pragma once

#include <string_view>
#include <vector>

#include "core/collective.h"
#include "algorithms/peer_io.h"

namespace chorus {

using AlgorithmFn = void (*)(PeerIO&, const Op&);

struct AlgorithmEntry {
  Collective collective;
  const char* name;  // "ring", "tree", "halving_doubling", ...
  AlgorithmFn run;
};

// The whole table, in a stable order (per collective, then by name as listed).
const std::vector<AlgorithmEntry>& algorithmTable();
// The algorithm `name` for collective `c`; nullptr when that algorithm does not implement `c`.
AlgorithmFn findAlgorithm(Collective c, std::string_view name);
// True when some collective has an algorithm called `name`.
bool isAlgorithmName(std::string_view name);

}  // namespace chorus
