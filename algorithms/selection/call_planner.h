// How each call of a communicator runs, decided in one place. For a call: its algorithm (CHORUS_ALGO's rules where
// they apply, else the autotuner where it tunes the call, else the cost model's table, selector.h), its slice size
// and its TCP stripe width; for a batch, the fusion threshold of its allreduces. The communicator runs what the
// plan says and hands the planner the times of trial calls; nothing else reads the settings that shape a call.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "algorithms/selection/autotune_table.h"
#include "algorithms/selection/fusion_tuner.h"
#include "algorithms/selection/world_costs.h"
#include "algorithms/selector.h"
#include "core/collective.h"
#include "core/comm_config.h"

namespace chorus {

struct CallPlan {
  AlgorithmId algorithm = AlgorithmId::kRing;
  AlgorithmFn run = nullptr;
  size_t sliceBytes = 0;  // never 0 in a plan
  int stripeWidth = 0;    // sockets per TCP rail; 0: each pair's default (CHORUS_NSOCKS)
  // The call runs as consecutive pieces of at most this many bytes, each a whole call of the algorithm (see
  // segmentBytesFor); 0: in one piece.
  size_t segmentBytes = 0;
  bool trial = false;  // an autotune trial: its time goes to recordTrial
};

// The largest piece of an allreduce over the network that keeps every rank from posting more than one slice to a
// peer ahead of what that peer has taken in. Bytes posted further ahead wait in the kernel: the peer's receive
// window closes, and each of its receives then reopens it and runs the sender's transmit in its own system call
// (tcp_write_xmit under recvmsg in a profile), while the waiting bytes leave the caches. 2 ranks over TCP moved a
// 64 MiB ring allreduce at 1.5-2.0 GB/s in one piece and 2.4-3.5 in 1 MiB pieces; 4 ranks' halving-doubling
// 0.8-0.9 against 1.4-1.9 (perf/results/tcp.md, "Bytes posted ahead").
// The ring's first step posts a rank's whole chunk (bytes / n) to the next rank, halving-doubling's first exchange
// half the buffer, recursive doubling's every exchange all of it; the tree's pipeline already paces its sends, and
// a two-level algorithm's levels are shared memory inside a host. 0 (no pieces) for those, for other collectives,
// and over shared memory, whose ring buffers hold a sender back by themselves.
size_t segmentBytesFor(Collective c, AlgorithmId algorithm, int nranks, size_t sliceBytes, bool overNetwork);

struct BatchPlan {
  size_t fusionThreshold = 0;  // allreduces of a batch fused up to this many bytes; 0: none
  bool trial = false;          // an autotune trial: the batch's time goes to recordBatchTrial
};

// What the planner knows of the world it plans for.
struct PlannerWorld {
  const GlobalTopology& topology;
  const LinkModel& links;
  bool sameHostOverNetwork = false;  // ranks of one host talk over the network (a transport list without shm)
  int localRanks = 1;                // ranks on this machine (emulated hosts share its cores)
  int maxSockets = 1;                // the most sockets per rail any TCP pair can stripe over
  // A core's own cache (its L2; 0: unknown) and how many slices a pipeline holds in each of its two staging pools:
  // what sizes the slice of calls that stay in shared memory (sharedMemorySlice).
  size_t coreCacheBytes = 0;
  int pipelineSlots = 0;
};

// The slice of large host calls whose ranks all share memory: at most `configured` (CHORUS_CHUNK_SIZE), and no larger
// than keeps a rank's pipeline (two pools of `slots` slices) inside one core's cache, a power of two from 64 KiB. Over
// shared memory a slice is copied in and reduced by ranks that take turns on the cores; slices that leave the cache
// come back from memory. 4 ranks on 2 cores with a 1 MiB L2 ran ring allreduces of 4-16 MiB 1.13-1.24x faster in
// 128 KiB slices than in 512 KiB, 2 ranks 0.99-1.05x. A call whose step fits one configured slice keeps it (hostSlice):
// cutting it only adds handoffs (2 ranks, 512 KiB: 43.6 us in 128 KiB slices, 38.7 in 512 KiB). Figures:
// perf/results/selection.md, "The slice over shared memory".
size_t sharedMemorySlice(size_t configured, size_t coreCacheBytes, int slots);

class CallPlanner {
 public:
  // config: the communicator's settings (algo, chunkSize, deviceChunkSize, fusionThreshold, autotune,
  // socketsPerPeer). Throws chorusInvalidArgument on bad CHORUS_ALGO rules.
  CallPlanner(int rank, const CommConfig& config, const PlannerWorld& world);
  ~CallPlanner();
  // Throws chorusInvalidArgument on settings no planner could take (bad CHORUS_ALGO rules): checked at init,
  // before any network traffic.
  static void checkSettings(const CommConfig& config);

  // The plan of one call over `nranks` ranks (device calls are never tuned).
  CallPlan plan(const CallArgs& op, int nranks, bool deviceCall);
  // The same without the tuner: the calls that agree the trials' times must not be trials themselves.
  CallPlan planUntuned(const CallArgs& op, int nranks) const;
  // The plan of a batch (a group's calls): how far its allreduces are fused.
  BatchPlan planBatch(std::span<const CallArgs> ops, bool deviceCall);

  // Replaces every rank's `times` with their average over the ranks, call by call (the communicator's allreduce):
  // every rank's tuner must take the same decision from the same numbers.
  using AgreeTimes = std::function<void(std::vector<double>&)>;
  // A trial call's time (plan().trial); at the end of a stage, agrees the stage's times through `agree`.
  void recordTrial(double seconds, const AgreeTimes& agree);
  // A trial batch's time (planBatch().trial).
  void recordBatchTrial(double seconds, const AgreeTimes& agree);

  // CHORUS_AUTOTUNE: whether the tuner runs; its settled decisions in CHORUS_ALGO syntax ("" when none or off);
  // loading a table in that syntax (CHORUS_AUTOTUNE_FILE) settles what it covers.
  bool tuning() const { return autotune_ != nullptr; }
  std::string tunedRules() const;
  void loadTuned(const std::string& rules);

  // The flat algorithm for one level of a two-level call (the hierarchy's choice).
  AlgorithmFn levelAlgorithm(const CallArgs& op, int groupSize, bool acrossHosts) const;
  // The world's cost inputs and the decision table, for the log.
  const CostInputs& inputs() const { return inputs_; }
  const DecisionTable& table() const { return selector_.table(); }

  // The largest slice a host (device) call of a communicator with `config` may be planned with: its staging slots'
  // size.
  static size_t largestSlice(const CommConfig& config);
  static size_t largestDeviceSlice(const CommConfig& config);

 private:
  CallPlan finish(const CallArgs& op, int nranks, AlgorithmId id, AlgorithmFn run, size_t sliceBytes, int sockets,
                  bool deviceCall, bool trial) const;
  // A host call's slice where no rule sets one: the configured slice, or over shared memory alone the cache-sized one
  // (sharedMemorySlice) once a step's share of the call (its bytes over the ranks) spans more than one slice.
  size_t hostSlice(const CallArgs& op, int nranks) const;

  int rank_;
  CostInputs inputs_;
  size_t sliceBytes_, deviceSliceBytes_, fusionThreshold_;
  bool overNetwork_;  // some pair of ranks talks over the network (several hosts, or no shared memory)
  size_t sharedMemorySlice_;  // hostSlice's slice for large calls (sliceBytes_ over the network)
  Selector selector_;
  // The last untuned plan and the shape it was made for (what selection and finish read): calls of one shape back
  // to back, a training loop's or a sweep's, skip the selection, which costs a small call about 150 instructions
  // and two divisions.
  struct LastPlan {
    bool valid = false;
    bool deviceCall = false;
    Collective collective = Collective::kAllReduce;
    int elementBytes = 0, nranks = 0;
    size_t bytes = 0;
    CallPlan plan;
  } last_;
  std::unique_ptr<AutotuneTable> autotune_;  // null: CHORUS_AUTOTUNE off
  std::unique_ptr<FusionTuner> fusionTuner_;  // null: CHORUS_AUTOTUNE off
};

}  // namespace chorus
