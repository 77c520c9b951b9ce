// CHORUS_AUTOTUNE on a communicator: its table (algorithms/selection/autotune_table.h), the timing of trial calls,
// the agreement of each stage's times across ranks, and the table file (CHORUS_AUTOTUNE_FILE).
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "algorithms/algorithm_registry.h"
#include "algorithms/selection/autotune_table.h"
#include "core/datatype.h"
#include "core/error.h"
#include "core/logging.h"
#include "src/comm/comm_engine.h"

namespace chorus {

namespace {
// The largest slice any CHORUS_ALGO rule of `algo` asks for (0: none does).
size_t largestRuleSlice(const std::string& algo) {
  const AlgoRules rules = AlgoRules::parse(algo);
  size_t largest = 0;
  for (const AlgoRule& rule : rules.rules()) largest = std::max(largest, rule.sliceBytes);
  return largest;
}
}  // namespace

size_t CommEngine::largestSlice(const CommConfig& config) {
  size_t largest = std::max(config.chunkSize, largestRuleSlice(config.algo));
  if (config.autotune) largest = std::max(largest, std::min(config.chunkSize * 4, kMaxSliceBytes));
  return largest;
}

size_t CommEngine::largestDeviceSlice(const CommConfig& config) {
  return std::max(config.deviceChunkSize, largestRuleSlice(config.algo));  // device calls are never tuned
}

void CommEngine::startAutotune(const CostInputs& in, Deadline deadline) {
  if (!config_.autotune) return;
  // The sockets a TCP pair can stripe over: the most any connection of this communicator has per rail.
  size_t sockets = 1;
  for (const auto& c : conns_) {
    if (c) sockets = std::max(sockets, c->maxStripeWidth());
  }
  autotune_ = std::make_unique<AutotuneTable>(in, AlgoRules::parse(config_.algo), config_.chunkSize,
                                              static_cast<int>(sockets), config_.socketsPerPeer);
  fusionTuner_ = std::make_unique<FusionTuner>(config_.fusionThreshold);
  CHORUS_INFO(rank_, "autotune: on" << (config_.algo.empty() ? "" : " where CHORUS_ALGO does not decide"));
  if (config_.autotuneFile.empty()) return;
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
    autotune_->load(AlgoRules::parse(text));
  } catch (const Error& e) {
    throw Error(chorusInvalidArgument, "rank " + std::to_string(rank_) + ": init: CHORUS_AUTOTUNE_FILE=" +
                                           config_.autotuneFile + " (rank 0's): " + e.what());
  }
  if (!text.empty()) CHORUS_INFO(rank_, "autotune: table loaded from " << config_.autotuneFile << ": " << text);
}

AlgorithmChoice CommEngine::chooseAlgorithm(const Op& o, bool deviceCall, bool* trial) {
  *trial = false;
  if (autotune_ && !deviceCall) {
    const AutotuneTable::Pick p =
        autotune_->pick(o.collective, static_cast<int>(typeSize(o.type)), selectionBytes(o, size_));
    if (p.tuned) {
      *trial = p.trial;
      return {p.candidate.algorithm, findAlgorithm(o.collective, p.candidate.algorithm)->run, p.candidate.sliceBytes,
              p.candidate.sockets};
    }
  }
  return selector_->choose(o, size_);
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
  io.setSliceBytes(config_.chunkSize);
  selector_->choose(agree, size_).run(io, agree);
  for (double& t : times) t /= size_;
}

void CommEngine::recordTrial(double seconds, CommIO& io) {
  if (!autotune_->record(seconds)) return;
  // The stage is complete on every rank at this same call: agree on its times (each call's averaged over the ranks),
  // so that every rank's table takes the same decision.
  agreeTimes(autotune_->stageTimes(), io);
  CHORUS_INFO(rank_, "autotune: stage " << autotune_->describeStage());
  const int settled = autotune_->settledBuckets();
  autotune_->finishStage();
  if (autotune_->settledBuckets() != settled) {
    CHORUS_INFO(rank_, "autotune: " << autotune_->settledBuckets() << " size(s) settled after "
                                    << autotune_->trialCalls() << " trial calls: " << autotune_->asRules());
  }
}

size_t CommEngine::fusionThreshold(std::span<const Op> ops, bool deviceCall, bool* trial) {
  *trial = false;
  if (deviceCall) return 0;  // the fusion buffer is host memory
  if (!fusionTuner_) return config_.fusionThreshold;
  size_t allreduces = 0, bytes = 0;
  for (const Op& o : ops) {
    if (o.collective != Collective::kAllReduce) continue;
    ++allreduces;
    bytes += o.count * typeSize(o.type);
  }
  const FusionTuner::Pick p = fusionTuner_->pick(allreduces, bytes);
  *trial = p.trial;
  return p.threshold;
}

void CommEngine::recordFusionTrial(double seconds, CommIO& io) {
  if (!fusionTuner_->record(seconds)) return;
  agreeTimes(fusionTuner_->stageTimes(), io);
  fusionTuner_->finishStage();
  CHORUS_INFO(rank_, "autotune: " << fusionTuner_->settled() << " group shape(s) settled, the last on a fusion "
                                  << "threshold of " << formatSize(fusionTuner_->lastSettledThreshold()));
}

void CommEngine::writeAutotuneFile() noexcept {
  if (!autotune_ || rank_ != 0 || config_.autotuneFile.empty()) return;
  try {
    const std::string rules = autotune_->asRules();
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
