// Where a communicator finds its peers: rank, size, the store, the job, the key namespace.
#pragma once

#include <cstdint>
#include <string>

#include "chorus/chorus.h"

namespace chorus {

struct LaunchSpec {
  int rank = -1;
  int nranks = 0;
  std::string storeHost;
  uint16_t storePort = 0;
  std::string jobId;      // presented to the store; a store of another job refuses us
  std::string keyPrefix;  // namespace for this communicator's keys in a shared store
  bool serveStore = false;  // this rank serves the store itself (env mode, rank 0)
  std::string source;     // which variables it came from, for messages ("CHORUS_*", "torchrun", ...)
};

// Reads the launch from the environment (CHORUS_*, torchrun, Open MPI, Slurm, in that order).
// Throws chorusInvalidArgument saying which variables are missing or malformed.
LaunchSpec launchSpecFromEnv();

// Encodes a store address and job into a unique id, and back (throws chorusInvalidArgument on a bad id).
chorusUniqueId encodeUniqueId(const std::string& host, uint16_t port, const std::string& jobId,
                              const std::string& commId);
LaunchSpec decodeUniqueId(const chorusUniqueId& id, int rank, int nranks);

// 2*nbytes random lowercase hex characters from the kernel's generator.
std::string randomHex(size_t nbytes);

}  // namespace chorus
