// The only place that decides which algorithm runs for a call.
#pragma once

#include <string>

#include "algorithms/algorithm_table.h"
#include "algorithms/collective.h"
#include "algorithms/peer_io.h"

namespace chorus {

struct AlgorithmChoice {
  const char* name;
  AlgorithmFn run;
};

class Selector {
 public:
  // forced: CHORUS_ALGO ("" = choose by size); smallThreshold: allreduce bytes up to which recursive doubling wins.
  // Throws chorusInvalidArgument on an unknown algorithm name.
  Selector(const std::string& forced, size_t smallThreshold);
  AlgorithmChoice choose(const Op& op, int nranks) const;

 private:
  std::string forced_;
  size_t smallThreshold_;
};

}  // namespace chorus
