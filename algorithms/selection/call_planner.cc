#include "algorithms/selection/call_planner.h"

#include <algorithm>

#include "algorithms/algorithm_registry.h"
#include "core/datatype.h"
#include "core/logging.h"

namespace chorus {

namespace {

// The largest slice any CHORUS_ALGO rule of `algo` asks for (0: none does).
size_t largestRuleSlice(const std::string& algo) {
  const AlgoRules rules = AlgoRules::parse(algo);
  size_t largest = 0;
  for (const AlgoRule& rule : rules.rules()) largest = std::max(largest, rule.sliceBytes);
  return largest;
}

// Emulated hosts on one machine share its cores: each host gets its share of them, a fraction of one where they
// outnumber the cores.
CostInputs inputsOf(const CommConfig& config, const PlannerWorld& w) {
  CostInputs in = costInputsFor(w.topology, w.links, w.sameHostOverNetwork, config.chunkSize);
  in.coresPerHost = in.coresPerHost * in.maxRanksPerHost / std::max(1, w.localRanks);
  return in;
}

}  // namespace

size_t sharedMemorySlice(size_t configured, size_t coreCacheBytes, int slots) {
  constexpr size_t kSmallest = 64 * 1024;
  if (coreCacheBytes == 0 || slots <= 0) return configured;
  size_t fits = kSmallest;
  while (fits * 2 * 2 * static_cast<size_t>(slots) <= coreCacheBytes) fits *= 2;
  return std::min(configured, fits);
}

size_t segmentBytesFor(Collective c, AlgorithmId algorithm, int nranks, size_t sliceBytes, bool overNetwork) {
  if (c != Collective::kAllReduce || !overNetwork || nranks < 2) return 0;
  switch (algorithm) {
    case AlgorithmId::kRing:
      return sliceBytes * static_cast<size_t>(nranks);
    case AlgorithmId::kHalvingDoubling:
      return sliceBytes * 2;
    case AlgorithmId::kRecursiveDoubling:
      return sliceBytes;
    default:
      return 0;
  }
}

CallPlanner::CallPlanner(int rank, const CommConfig& config, const PlannerWorld& world)
    : rank_(rank),
      inputs_(inputsOf(config, world)),
      sliceBytes_(config.chunkSize),
      deviceSliceBytes_(config.deviceChunkSize),
      fusionThreshold_(config.fusionThreshold),
      overNetwork_(inputs_.nhosts > 1 || !inputs_.intraHostMemory),
      sharedMemorySlice_(overNetwork_ ? sliceBytes_
                                      : sharedMemorySlice(sliceBytes_, world.coreCacheBytes, world.pipelineSlots)),
      selector_(config.algo, inputs_) {
  if (!config.autotune) return;
  autotune_ = std::make_unique<AutotuneTable>(inputs_, AlgoRules::parse(config.algo), config.chunkSize,
                                              world.maxSockets, config.socketsPerPeer);
  fusionTuner_ = std::make_unique<FusionTuner>(config.fusionThreshold);
  CHORUS_INFO(rank_, "autotune: on" << (config.algo.empty() ? "" : " where CHORUS_ALGO does not decide"));
}

CallPlanner::~CallPlanner() = default;

void CallPlanner::checkSettings(const CommConfig& config) { (void)AlgoRules::parse(config.algo); }

size_t CallPlanner::largestSlice(const CommConfig& config) {
  size_t largest = std::max(config.chunkSize, largestRuleSlice(config.algo));
  // The tuner tries a quarter and four times the slice size (autotune_table.h).
  if (config.autotune) largest = std::max(largest, std::min(config.chunkSize * 4, kMaxSliceBytes));
  return largest;
}

size_t CallPlanner::largestDeviceSlice(const CommConfig& config) {
  return std::max(config.deviceChunkSize, largestRuleSlice(config.algo));  // device calls are never tuned
}

CallPlan CallPlanner::finish(const CallArgs& op, int nranks, AlgorithmId id, AlgorithmFn run, size_t sliceBytes,
                             int sockets, bool deviceCall, bool trial) const {
  CallPlan p;
  p.algorithm = id;
  p.run = run;
  p.sliceBytes = sliceBytes ? sliceBytes : deviceCall ? deviceSliceBytes_ : hostSlice(op, nranks);
  p.stripeWidth = sockets;
  if (!deviceCall) p.segmentBytes = segmentBytesFor(op.collective, id, nranks, p.sliceBytes, overNetwork_);
  p.trial = trial;
  return p;
}

size_t CallPlanner::hostSlice(const CallArgs& op, int nranks) const {
  if (sharedMemorySlice_ == sliceBytes_) return sliceBytes_;  // over the network, or the cache's size unknown
  const size_t stepBytes = selectionBytes(op, nranks) / static_cast<size_t>(std::max(1, nranks));
  return stepBytes > sliceBytes_ ? sharedMemorySlice_ : sliceBytes_;
}

CallPlan CallPlanner::plan(const CallArgs& op, int nranks, bool deviceCall) {
  if (autotune_ && !deviceCall) {
    const AutotuneTable::Pick p =
        autotune_->pick(op.collective, static_cast<int>(typeSize(op.type)), selectionBytes(op, nranks));
    if (p.tuned) {
      return finish(op, nranks, p.candidate.algorithm, findAlgorithm(op.collective, p.candidate.algorithm)->run,
                    p.candidate.sliceBytes, p.candidate.sockets, false, p.trial);
    }
  }
  const size_t bytes = selectionBytes(op, nranks);
  const int elementBytes = static_cast<int>(typeSize(op.type));
  if (last_.valid && last_.bytes == bytes && last_.collective == op.collective && last_.nranks == nranks &&
      last_.elementBytes == elementBytes && last_.deviceCall == deviceCall) {
    return last_.plan;
  }
  const AlgorithmChoice c = selector_.choose(op, nranks);
  last_ = {true,
           deviceCall,
           op.collective,
           elementBytes,
           nranks,
           bytes,
           finish(op, nranks, c.id, c.run, c.sliceBytes, c.sockets, deviceCall, false)};
  return last_.plan;
}

CallPlan CallPlanner::planUntuned(const CallArgs& op, int nranks) const {
  const AlgorithmChoice c = selector_.choose(op, nranks);
  return finish(op, nranks, c.id, c.run, c.sliceBytes, c.sockets, false, false);
}

BatchPlan CallPlanner::planBatch(std::span<const CallArgs> ops, bool deviceCall) {
  if (deviceCall) return {};  // the fusion buffer is host memory
  if (!fusionTuner_) return {fusionThreshold_, false};
  size_t allreduces = 0, bytes = 0;
  for (const CallArgs& o : ops) {
    if (o.collective != Collective::kAllReduce) continue;
    ++allreduces;
    bytes += o.count * typeSize(o.type);
  }
  const FusionTuner::Pick p = fusionTuner_->pick(allreduces, bytes);
  return {p.threshold, p.trial};
}

void CallPlanner::recordTrial(double seconds, const AgreeTimes& agree) {
  if (!autotune_->record(seconds)) return;
  // The stage is complete on every rank at this same call: agree on its times, so that every rank's table takes
  // the same decision.
  agree(autotune_->stageTimes());
  CHORUS_INFO(rank_, "autotune: stage " << autotune_->describeStage());
  const int settled = autotune_->settledBuckets();
  autotune_->finishStage();
  if (autotune_->settledBuckets() != settled) {
    CHORUS_INFO(rank_, "autotune: " << autotune_->settledBuckets() << " size(s) settled after "
                                    << autotune_->trialCalls() << " trial calls: " << autotune_->asRules());
  }
}

void CallPlanner::recordBatchTrial(double seconds, const AgreeTimes& agree) {
  if (!fusionTuner_->record(seconds)) return;
  agree(fusionTuner_->stageTimes());
  fusionTuner_->finishStage();
  CHORUS_INFO(rank_, "autotune: " << fusionTuner_->settled() << " group shape(s) settled, the last on a fusion "
                                  << "threshold of " << formatSize(fusionTuner_->lastSettledThreshold()));
}

std::string CallPlanner::tunedRules() const { return autotune_ ? autotune_->asRules() : ""; }

void CallPlanner::loadTuned(const std::string& rules) {
  if (autotune_) autotune_->load(AlgoRules::parse(rules));
}

AlgorithmFn CallPlanner::levelAlgorithm(const CallArgs& op, int groupSize, bool acrossHosts) const {
  return selector_.chooseLevel(op, groupSize, acrossHosts).run;
}

}  // namespace chorus
