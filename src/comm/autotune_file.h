// CHORUS_AUTOTUNE_FILE: the tuned table a communicator starts from (rank 0's, loaded on every rank at init) and
// keeps (written by rank 0 at destroy). The planner decides (algorithms/selection/call_planner.h); the ranks agree
// on each trial's times in CallRunner::agreeTimes.
#pragma once

#include <string>

#include "algorithms/selection/call_planner.h"
#include "core/bootstrap/store.h"
#include "core/comm_config.h"
#include "core/deadline.h"

namespace chorus {

// Rank 0's file (config autotuneFile), for every rank through the store under keyPrefix: ranks that loaded
// different tables would run different algorithms. Nothing without a tuning planner or a file.
void loadAutotuneFile(CallPlanner& planner, const CommConfig& config, StoreClient& store,
                      const std::string& keyPrefix, int rank, Deadline deadline);
// The planner's tuned table, by rank 0 (planner may be null: a communicator that failed before planning); a
// failure is logged, never thrown (it runs at destroy).
void writeAutotuneFile(const CallPlanner* planner, const CommConfig& config, int rank) noexcept;

}  // namespace chorus
