// CHORUS_AUTOTUNE on a communicator, around its call planner (algorithms/selection/call_planner.h, which decides):
// the agreement of each trial stage's times across ranks, and the table file (CHORUS_AUTOTUNE_FILE).
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/error.h"
#include "core/logging.h"
#include "src/comm/comm_engine.h"

namespace chorus {

void CommEngine::loadAutotuneFile(Deadline deadline) {
  if (!planner_->tuning() || config_.autotuneFile.empty()) return;
  // Rank 0's file, for every rank: ranks that loaded different tables would run different algorithms.
  const std::string key = spec_.keyPrefix + "autotune/table";
  std::string text;
  if (rank_ == 0) {
    if (std::ifstream f(config_.autotuneFile); f) {
      std::stringstream s;
      s << f.rdbuf();
      text = s.str();
    }
    store_->set(key, Bytes(text.begin(), text.end()), deadline);
  } else {
    const Bytes b = store_->get(key, deadline);
    text.assign(b.begin(), b.end());
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  try {
    planner_->loadTuned(text);
  } catch (const Error& e) {
    throw Error(chorusInvalidArgument, errorContext(rank_, "init") + ": CHORUS_AUTOTUNE_FILE=" +
                                           config_.autotuneFile + " (rank 0's): " + e.what());
  }
  if (!text.empty()) CHORUS_INFO(rank_, "autotune: table loaded from " << config_.autotuneFile << ": " << text);
}

// The average over the ranks, not the slowest rank's time: back to back, each rank's time per call is the interval
// between its calls' ends, what the application sees; the slowest of four ranks on 2 cores adds each call's worst
// scheduling delay, which weighs on some algorithms more than others (perf/results/selection.md, "What the tuner's
// trials are made of").
void CommEngine::agreeTimes(std::vector<double>& times, CommIO& io) {
  Op agree;
  agree.collective = Collective::kAllReduce;
  agree.send = times.data();
  agree.recv = times.data();
  agree.count = times.size();
  agree.type = chorusFloat64;
  agree.op = chorusSum;
  agree.seq = seq_++;
  callTags_->begin(agree);
  io.begin(*callTags_, LazyDeadline::after(timeoutSeconds_), &agree);
  const CallPlan plan = planner_->planUntuned(agree, size_);
  io.setSliceBytes(plan.sliceBytes);
  io.setStripeWidth(plan.stripeWidth);
  plan.run(io, agree);
  for (double& t : times) t /= size_;
}

void CommEngine::writeAutotuneFile() noexcept {
  if (!planner_ || !planner_->tuning() || rank_ != 0 || config_.autotuneFile.empty()) return;
  try {
    const std::string rules = planner_->tunedRules();
    if (rules.empty()) return;
    // Whole or not at all: a reader never sees half a table.
    const std::string temporary = config_.autotuneFile + ".tmp";
    {
      std::ofstream f(temporary, std::ios::trunc);
      f << rules << "\n";
      if (!f.flush()) throw std::runtime_error("cannot write " + temporary + ": " + std::strerror(errno));
    }
    if (std::rename(temporary.c_str(), config_.autotuneFile.c_str()) != 0) {
      throw std::runtime_error("cannot rename " + temporary + " to " + config_.autotuneFile + ": " +
                               std::strerror(errno));
    }
    CHORUS_INFO(rank_, "autotune: table written to " << config_.autotuneFile);
  } catch (const std::exception& e) {
    CHORUS_WARN(rank_, "autotune: CHORUS_AUTOTUNE_FILE not written: " << e.what());
  }
}

}  // namespace chorus
