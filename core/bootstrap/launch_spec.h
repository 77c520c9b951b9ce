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
  std::string secret;     // proves membership of the job to the store and to peers; empty: none (see channel_auth.h)
  std::string keyPrefix;  // namespace for this communicator's keys in a shared store
  bool serveStore = false;  // this rank serves the store itself (env mode, rank 0)
  // No store named, but a PMIx launcher started the job: rank 0 serves one and PMIx tells the others where
  // (src/api/pmix_store.h). The rank and size are -1 and 0 until then when only PMIx says them.
  bool storeThroughPmix = false;
  std::string source;     // which variables it came from, for messages ("CHORUS_*", "torchrun", ...)
};

// Reads the launch from the environment (CHORUS_*, torchrun, Open MPI, Slurm, PMIx, in that order). The store is
// CHORUS_STORE, else MASTER_ADDR:MASTER_PORT, else, under a PMIx launcher, one PMIx names (storeThroughPmix).
// Throws chorusInvalidArgument saying which variables are missing or malformed.
LaunchSpec launchSpecFromEnv();

// Encodes a store address and job into a unique id, and back (throws chorusInvalidArgument on a bad id).
// carriedSecret is "" or kUniqueIdSecretHexChars lowercase hex characters (see newUniqueIdSecret); decoding
// yields it as the spec's secret, or CHORUS_SECRET when the id carries none.
// Layout (128 bytes): "CHORUSI2" | u8 flags (1: a secret follows) | 16 secret bytes (zero when none) |
// 103 bytes of NUL-separated host, port, job, comm, NUL-padded (the last byte is always NUL).
inline constexpr size_t kUniqueIdSecretHexChars = 32;
chorusUniqueId encodeUniqueId(const std::string& host, uint16_t port, const std::string& jobId,
                              const std::string& commId);
chorusUniqueId encodeUniqueId(const std::string& host, uint16_t port, const std::string& jobId,
                              const std::string& commId, const std::string& carriedSecret);
LaunchSpec decodeUniqueId(const chorusUniqueId& id, int rank, int nranks);
// The secret a chorusGetUniqueId store should carry in its ids: "" when CHORUS_SECRET is set (every rank has it),
// otherwise a fresh random one (kUniqueIdSecretHexChars hex characters).
std::string newUniqueIdSecret();

// 2*nbytes random lowercase hex characters from the kernel's generator.
std::string randomHex(size_t nbytes);

}  // namespace chorus
