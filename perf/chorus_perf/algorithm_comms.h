// The communicators that --algos compares: one per entry, made alongside the job's own through a unique id that rank 0
// broadcasts on it: the default selection's (algos[0], "default": the job's settings), then one per forced algorithm
// with the algorithm's name as its config's algo. The job's own communicator times nothing: it carries the runner's
// barriers and reductions (perf_runner.h): a column timed on it ran 1.05-1.3x an identical one on loopback and up to
// 2.5x in the topology lab (back-to-back broadcasts of 8 B).
#pragma once

#include <string>
#include <vector>

#include "chorus/chorus.h"

namespace chorus::perf {

// One communicator per name in algos, every rank calling alike. On
// failure, destroys what it made, prints why (naming the rank and the algorithm) and returns an empty list.
std::vector<chorusComm_t> openAlgorithmComms(chorusComm_t base, int rank, int nranks,
                                             const std::vector<std::string>& algos);

// Destroys them all; false if any destroy failed.
bool closeAlgorithmComms(const std::vector<chorusComm_t>& comms, int rank);

}  // namespace chorus::perf
