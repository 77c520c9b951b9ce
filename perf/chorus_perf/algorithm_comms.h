// The communicators that --algos compares: one per forced algorithm, made alongside the job's own (the default
// selection) through a unique id that rank 0 broadcasts on it, each with the algorithm's name as its config's algo.
#pragma once

#include <string>
#include <vector>

#include "chorus/chorus.h"

namespace chorus::perf {

// One communicator per name in algos[1..] (algos[0] is "default": base itself), every rank calling alike. On
// failure, destroys what it made, prints why (naming the rank and the algorithm) and returns an empty list.
std::vector<chorusComm_t> openAlgorithmComms(chorusComm_t base, int rank, int nranks,
                                             const std::vector<std::string>& algos);

// Destroys comms[1..] (comms[0] is the job's own, which the caller destroys); false if any destroy failed.
bool closeAlgorithmComms(const std::vector<chorusComm_t>& comms, int rank);

}  // namespace chorus::perf
