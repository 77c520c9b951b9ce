// chorus-topo --predict: the cost model's time and busbw of every algorithm, and the one the selector picks, for a
// cluster description at 8 to 16k ranks (or one world size), per collective and size.
#pragma once

#include <cstddef>
#include <ostream>
#include <vector>

#include "core/collective.h"
#include "perf/chorus_topo/cluster_file.h"

namespace chorus::topo {

struct PredictRequest {
  std::vector<int> ranks;            // world sizes (default: 8, 16, ..., 16384)
  std::vector<Collective> collectives;
  std::vector<size_t> sizes;         // nccl-tests bytes (default: 8 B to 1 GiB, x8)
  bool json = false;
};

// Fills the defaults of an empty field.
PredictRequest withDefaults(PredictRequest r);
// Prints the tables (or one JSON document) for every world size, collective and size of the request.
void printPredictions(std::ostream& out, const ClusterSpec& cluster, const PredictRequest& request);

}  // namespace chorus::topo
