#include "perf/chorus_perf/engine_facts.h"

#include "algorithms/selection/algo_rules.h"
#include "src/api/comm_handle.h"

namespace chorus::perf {

const char* lastAlgorithm(chorusComm_t comm) { return comm && comm->impl ? comm->impl->lastAlgorithm() : ""; }

std::string lastPlan(chorusComm_t comm) {
  const std::string name = lastAlgorithm(comm);
  return name.empty() ? name : name + "@" + formatSize(comm->impl->lastSliceBytes());
}

std::string transportsInUse(chorusComm_t comm) { return comm && comm->impl ? comm->impl->transportsInUse() : ""; }

}  // namespace chorus::perf
