// The C ABI of elastic jobs: chorusCommShrink (go on without lost ranks) and chorusCommGrow (take new ones in).
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "chorus/chorus.h"
#include "src/api/api_errors.h"
#include "src/api/argument_checks.h"
#include "src/api/comm_handle.h"
#include "src/api/config_arguments.h"
#include "src/api/group.h"
#include "core/error.h"

using chorus::api::fail;
using chorus::api::guarded;
using namespace chorus::api::checks;

namespace {

// Runs make() for a new communicator handle; a failure names the communicator the config names.
template <class Make>
chorusResult_t makeComm(chorusComm_t comm, const char* call, chorusComm_t* newcomm, Make make) {
  return guarded(comm, call, [&] {
    auto h = std::make_unique<chorusComm>();
    h->impl = make();
    *newcomm = h.release();
  });
}

}  // namespace

extern "C" {

chorusResult_t chorusCommShrink(chorusComm_t comm, const int* excludeRanks, int excludeCount, chorusComm_t* newcomm,
                                chorusConfig_t* config, int flags) {
  const char* call = "chorusCommShrink";
  if (!comm || !comm->impl) return fail(comm, chorusInvalidArgument, std::string(call) + ": comm is NULL");
  if (!newcomm) return fail(comm, chorusInvalidArgument, whereOf(comm, call) + "newcomm is NULL");
  *newcomm = nullptr;
  if (flags != CHORUS_SHRINK_DEFAULT && flags != CHORUS_SHRINK_ABORT) {
    return fail(comm, chorusInvalidArgument,
                whereOf(comm, call) + "flags " + std::to_string(flags) +
                    " is neither CHORUS_SHRINK_DEFAULT (0) nor CHORUS_SHRINK_ABORT (1)");
  }
  if (excludeCount < 0 || (excludeCount > 0 && !excludeRanks)) {
    return fail(comm, chorusInvalidArgument,
                whereOf(comm, call) + "excludeCount " + std::to_string(excludeCount) +
                    (excludeCount < 0 ? " is negative" : " with excludeRanks NULL"));
  }
  const int n = comm->impl->size();
  std::vector<int> excluded(excludeRanks, excludeRanks + excludeCount);
  for (int r : excluded) {
    if (r < 0 || r >= n) {
      return fail(
          comm, chorusInvalidArgument,
          whereOf(comm, call) + "excluded rank " + std::to_string(r) + " is outside [0, " + std::to_string(n) + ")");
    }
  }
  std::sort(excluded.begin(), excluded.end());
  excluded.erase(std::unique(excluded.begin(), excluded.end()), excluded.end());
  if (!excludeRanks && flags != CHORUS_SHRINK_ABORT) {
    return fail(comm, chorusInvalidArgument,
                whereOf(comm, call) + "excludeRanks NULL (leave out the lost ranks) needs CHORUS_SHRINK_ABORT");
  }
  if (chorus::api::inGroup()) {
    return fail(comm, chorusInvalidUsage, whereOf(comm, call) + "inside a group (a shrink runs at once)");
  }
  chorus::CommEngine& parent = *comm->impl;
  chorus::CommConfig resolved;
  chorusResult_t r = guarded(comm, call, [&] { resolved = chorus::resolveConfig(config, call, &parent.config()); });
  if (r != chorusSuccess) return r;
  const bool explicitList = excludeRanks != nullptr;
  // Not the parent's own error record: a failed shrink must not break a healthy parent.
  return makeComm(nullptr, call, newcomm, [&] {
    return parent.shrink(explicitList ? &excluded : nullptr, flags == CHORUS_SHRINK_ABORT, std::move(resolved));
  });
}

chorusResult_t chorusCommGetUniqueId(chorusComm_t comm, chorusUniqueId* uniqueId) {
  const char* call = "chorusCommGetUniqueId";
  if (!comm || !comm->impl) return fail(comm, chorusInvalidArgument, std::string(call) + ": comm is NULL");
  if (!uniqueId) return fail(comm, chorusInvalidArgument, whereOf(comm, call) + "uniqueId is NULL");
  return guarded(comm, call, [&] { *uniqueId = comm->impl->growId(); });
}

chorusResult_t chorusCommGrow(chorusComm_t comm, int newRanks, const chorusUniqueId* uniqueId, int rank,
                              chorusComm_t* newcomm, chorusConfig_t* config) {
  const char* call = "chorusCommGrow";
  if (!newcomm) return fail(comm, chorusInvalidArgument, std::string(call) + ": newcomm is NULL");
  *newcomm = nullptr;
  if (newRanks < 0) {
    return fail(comm, chorusInvalidArgument, std::string(call) + ": newRanks " + std::to_string(newRanks) + " < 0");
  }
  if (chorus::api::inGroup()) {
    return fail(comm, chorusInvalidUsage, std::string(call) + ": inside a group (a grow runs at once)");
  }
  if (!comm) {
    // A new process: it joins with the id rank 0 of the growing communicator made.
    if (!uniqueId) return fail(nullptr, chorusInvalidArgument, std::string(call) + ": a new rank needs the id");
    chorus::CommConfig resolved;
    chorusResult_t r = guarded(nullptr, call, [&] { resolved = chorus::resolveConfig(config, call); });
    if (r != chorusSuccess) return r;
    return makeComm(nullptr, call, newcomm,
                    [&] { return chorus::CommEngine::joinGrown(*uniqueId, newRanks, rank, std::move(resolved)); });
  }
  if (!comm->impl) return fail(comm, chorusInvalidArgument, std::string(call) + ": comm is NULL");
  if (comm->impl->rank() == 0 && !uniqueId) {
    return fail(comm, chorusInvalidArgument,
                whereOf(comm, call) + "rank 0 must pass the id it made with chorusCommGetUniqueId");
  }
  chorus::CommEngine& parent = *comm->impl;
  chorus::CommConfig resolved;
  chorusResult_t r = guarded(comm, call, [&] { resolved = chorus::resolveConfig(config, call, &parent.config()); });
  if (r != chorusSuccess) return r;
  return makeComm(comm, call, newcomm, [&] { return parent.grow(uniqueId, newRanks, std::move(resolved)); });
}

}  // extern "C"
