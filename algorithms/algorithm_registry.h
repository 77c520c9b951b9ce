// One record per algorithm x collective: the only list of what Chorus can run, how, and at what predicted cost.
// The selector chooses among these records; CHORUS_ALGO names them; chorus-topo prints them.
#pragma once

#include <cstddef>
#include <vector>

#include "algorithms/algorithm_id.h"
#include "algorithms/peer_io.h"
#include "algorithms/selection/cost_model.h"
#include "core/collective.h"

namespace chorus {

using AlgorithmFn = void (*)(PeerIO&, const CallArgs&);
// Predicted microseconds for `bytes` (nccl-tests' size) of the collective in the world `in` describes;
// +infinity where the algorithm cannot help.
using AlgorithmCostFn = double (*)(Collective c, size_t bytes, const CostInputs& in);

struct AlgorithmRecord {
  AlgorithmId id;
  Collective collective;
  AlgorithmFn run;
  AlgorithmCostFn cost;
  bool flat;  // runs over any group of ranks as one level, so a two-level algorithm may use it for a level
};

// Every record, in a stable order (the order breaks ties between equal predictions).
const std::vector<AlgorithmRecord>& algorithmRegistry();
// The record of algorithm `id` for collective `c`; nullptr when that algorithm does not implement `c`.
const AlgorithmRecord* findAlgorithm(Collective c, AlgorithmId id);
// The algorithm that `named` (from a CHORUS_ALGO rule or an autotune file) stands for in collective `c`: "ring" means
// the chain where `c` has a chain and no ring (broadcast, reduce), as NCCL names it, so that CHORUS_ALGO=ring and
// tables that name the chain "ring" keep choosing it. Any other id stands for itself.
AlgorithmId algorithmFor(Collective c, AlgorithmId named);

}  // namespace chorus
