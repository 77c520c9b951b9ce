// Which algorithm the rules and the cost model name for a call (the call planner, selection/call_planner.h, asks it
// where the tuner does not decide): for a call over the whole world, CHORUS_ALGO rules where they apply, else the
// cost model's choice (selection/decision_table.h); for one level of a two-level call, the cost model's choice for
// that level's group (within one host, or one rank per host).
#pragma once

#include <string>

#include "algorithms/algorithm_registry.h"
#include "algorithms/selection/algo_rules.h"
#include "algorithms/selection/decision_table.h"
#include "core/collective.h"

namespace chorus {

struct AlgorithmChoice {
  AlgorithmId id;
  AlgorithmFn run;
  size_t sliceBytes = 0;  // 0: the communicator's slice size; else what a rule (CHORUS_ALGO's "@") or the tuner set
  int sockets = 0;        // 0: each TCP pair's default stripe width; else what a rule ("/N") or the tuner set
};

class Selector {
 public:
  // rules: CHORUS_ALGO text ("" = the model decides everything). Throws chorusInvalidArgument on bad rules.
  // inputs: the world; its levels are derived from it (a host's ranks; one rank per host).
  Selector(const std::string& rules, const CostInputs& inputs);
  AlgorithmChoice choose(const CallArgs& op, int nranks) const;
  // The flat algorithm for one level of a two-level call over `groupSize` ranks, within one host or across hosts.
  AlgorithmChoice chooseLevel(const CallArgs& op, int groupSize, bool acrossHosts) const;
  const DecisionTable& table() const { return table_; }

 private:
  AlgoRules rules_;
  bool perCallRules_;  // rules_ has rules by element width or with slices, which the table cannot hold
  DecisionTable table_;
  // One level's flat choices (selection/cost_model.h's hostLevel and leaderLevel); an allreduce's leaders have their
  // own.
  DecisionTable intraHost_, interHost_, leadersAllReduce_;
};

// The size the selector and CHORUS_ALGO ranges see for a call: nccl-tests' "size" column (0 for alltoallv, whose
// sizes differ from rank to rank, and for barrier).
size_t selectionBytes(const CallArgs& op, int nranks);

}  // namespace chorus
