// What chorus-perf reports about how its calls ran, read from the library's internals (no public call says it): the
// algorithm of a communicator's last collective and the transports that reach its peers.
#pragma once

#include <string>

#include "chorus/chorus.h"

namespace chorus::perf {

// The algorithm of comm's last collective ("" before any, and for point-to-point calls); a static name.
const char* lastAlgorithm(chorusComm_t comm);

// The plan of comm's last collective in CHORUS_ALGO's syntax: its algorithm and slice size ("ring@512K"); "" before
// any, and for point-to-point calls.
std::string lastPlan(chorusComm_t comm);

// The transports from this rank to its peers, comma-separated ("shm", "shm,tcp").
std::string transportsInUse(chorusComm_t comm);

}  // namespace chorus::perf
