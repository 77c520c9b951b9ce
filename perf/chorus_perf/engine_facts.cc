#include "perf/chorus_perf/engine_facts.h"

#include "src/api/comm_handle.h"

namespace chorus::perf {

const char* lastAlgorithm(chorusComm_t comm) { return comm && comm->impl ? comm->impl->lastAlgorithm() : ""; }

std::string transportsInUse(chorusComm_t comm) { return comm && comm->impl ? comm->impl->transportsInUse() : ""; }

}  // namespace chorus::perf
