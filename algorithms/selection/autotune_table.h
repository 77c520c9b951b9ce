// CHORUS_AUTOTUNE's decisions. Per (collective, element width, power-of-two size bucket) the tuner tries candidates
// on real calls, in stages, and keeps the fastest:
//   1. every algorithm the cost model can price for the call (up to six, in the order of its prediction: the prior
//      orders them and breaks ties, but does not rule any out, since a model fed the wrong link parameters would
//      rule out the right one), two calls each back to back, twice over (a a b b c c a a b b c c; once over for six),
//      so that each scores by calls far apart in time: one slow spell of the machine (256 KiB calls of 1-6 ms for
//      some 20 ms, where they take 0.2-0.3) can take every call of a candidate run in one stretch, the best one
//      included;
//   2. where the variants leave six calls or more over, the two fastest, back to back, half of those calls each (5
//      each under 256 KiB, where no variants follow); the faster is the algorithm (else stage 1's fastest is);
//   3. that algorithm as it is, against each variant that can matter: where the message spans a slice, a quarter and
//      four times the communicator's slice size; where TCP pairs have sockets to choose from and the message is
//      large enough to stripe, 1, 2 or 4 sockets per rail instead of CHORUS_NSOCKS; three calls each for up to three
//      candidates, two each for more; a variant wins only if its score beats the default's by 3% (12% where it ran
//      one call that counts).
// Each candidate's calls run back to back, the first of each run not counted (trial_stage.h). At most 31 calls per
// bucket (5 x 4 + 5 x 2; 5 x 4 + 2 x 5 without variants); after that the bucket is settled and a call costs one
// array lookup.
// This table is bookkeeping only: the communicator's call runner (src/comm/call_runner.cc) times the calls and
// agrees each stage's times with the other ranks (each call's time averaged over the ranks) before finishStage(),
// so that every rank feeds the table the same numbers in the same order and takes the same decisions.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "algorithms/algorithm_id.h"
#include "algorithms/selection/algo_rules.h"
#include "algorithms/selection/cost_model.h"
#include "algorithms/selection/trial_stage.h"
#include "core/collective.h"

namespace chorus {

struct TuneCandidate {
  AlgorithmId algorithm = AlgorithmId::kRing;
  size_t sliceBytes = 0;  // 0: the communicator's slice size
  int sockets = 0;        // 0: the pairs' default stripe width (CHORUS_NSOCKS); else sockets per rail
  bool operator==(const TuneCandidate&) const = default;
};

class AutotuneTable {
 public:
  // inputs: the world (the prior's cost model); forced: CHORUS_ALGO (calls its rules cover are never tuned);
  // chunkBytes: the communicator's slice size; sockets: the most sockets per rail any TCP pair of the communicator
  // can stripe over (1: nothing to choose), defaultSockets the width they stripe over by default.
  AutotuneTable(const CostInputs& inputs, AlgoRules forced, size_t chunkBytes, int sockets = 1,
                int defaultSockets = 1);
  ~AutotuneTable();
  // Settles the buckets a table in CHORUS_ALGO syntax (asRules()'s) covers whole: they are not tried again.
  void load(const AlgoRules& tuned);

  struct Pick {
    bool tuned = false;  // false: a call the tuner leaves to the selector (forced, or not tunable)
    bool trial = false;  // the call is a trial: its time goes to record()
    TuneCandidate candidate;
  };
  // What a call of `bytes` (selectionBytes) on elements of `elementBytes` runs.
  Pick pick(Collective c, int elementBytes, size_t bytes);
  // The time of the trial pick() just returned; true when it was the last call of its stage: stageTimes() then
  // holds this rank's times of the stage, to be replaced by the agreed ones before finishStage().
  bool record(double seconds);
  std::vector<double>& stageTimes();
  // Ends the stage of the last trial with stageTimes() as agreed: narrows the candidates, or settles the bucket.
  void finishStage();
  // The stage of the last trial, for the log: its bucket and each candidate's agreed times in microseconds
  // ("allreduce.32 1M: ring 512 530 | tree@128K 600 610").
  std::string describeStage() const;

  // The settled buckets in CHORUS_ALGO syntax ("allreduce.32:64K-128K=ring@2M,...;..."); "" when none.
  std::string asRules() const;
  // Buckets settled by trials (not loaded) so far, and the trial calls they took.
  int settledBuckets() const { return settled_; }
  int trialCalls() const { return trials_; }

  static constexpr int kPriorCandidates = 6;
  // Rounds of each stage: every candidate once per round.
  // The first stage: runs of kFirstRunCalls, kFirstPasses times over the candidates (once where there are more than
  // kTwoPassCandidates); then the finalists, at least kFinalRounds calls each where the budget leaves that many.
  static constexpr int kFirstRunCalls = 2, kFirstPasses = 2, kTwoPassCandidates = 5, kFinalRounds = 3,
                       kVariantRounds = 3, kVariantRoundsForMore = 2;
  // TCP stripes messages from this size (transports/tcp/stripe_cuts.h): smaller calls have no sockets to tune.
  static constexpr size_t kStripedFromBytes = 256 * 1024;
  static constexpr int kMaxCallsPerBucket = 32;

 private:
  struct Bucket;
  // The bucket of a call, or null when the tuner leaves such calls alone.
  Bucket* bucketFor(Collective c, int elementBytes, size_t bytes);
  void startStage(Bucket& b, std::vector<TuneCandidate> candidates, int rounds, int passes = 1);
  // Algorithm a as it is (first), then its variants that can matter for the bucket's sizes.
  std::vector<TuneCandidate> variantsOf(const Bucket& b, AlgorithmId a) const;
  static int variantRounds(size_t variants);

  CostInputs inputs_;
  AlgoRules forced_;
  size_t chunkBytes_;
  int sockets_, defaultSockets_;
  std::vector<std::unique_ptr<Bucket>> buckets_;  // by index(); made at a bucket's first call
  Bucket* pending_ = nullptr;                     // the bucket of the last trial pick
  int settled_ = 0, trials_ = 0;
};

}  // namespace chorus
