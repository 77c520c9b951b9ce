// torch.distributed's backend "chorus": a c10d::ProcessGroup over one Chorus communicator. Every call is queued (on
// the group's host stream for CPU tensors, on a CUDA stream for CUDA tensors) and returns a Work at once; the
// communicator is met through the store torch hands the backend (rank 0 publishes a unique id there, as
// ProcessGroupNCCL does), or, for the world chorusrun started, through chorusrun's store.
#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "chorus/chorus.h"
#include "cuda_calls.h"

namespace chorus_torch {

class ProcessGroupChorus : public c10d::ProcessGroup {
 public:
  ProcessGroupChorus(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                     std::chrono::milliseconds timeout);
  // Adopts `comm` (a split of another group's communicator), with a host stream of its own; `store` and every key
  // under `storePrefix` are this group's (for monitored barriers).
  ProcessGroupChorus(chorusComm_t comm, int rank, int size, c10::intrusive_ptr<c10d::Store> store,
                     std::string storePrefix);
  ~ProcessGroupChorus() override;

  // What torch.distributed.Backend.register_backend calls.
  static c10::intrusive_ptr<c10d::ProcessGroup> create(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                       int size, const std::chrono::duration<float>& timeout);

  // torch.distributed.new_group through chorusCommSplit: every rank of this group calls it in the same order; ranks
  // with `color` CHORUS_SPLIT_NOCOLOR get null, the others a group over the ranks of their color, ordered by `key`.
  // The child shares this group's connections (CHORUS_SPLIT_SHARE) and takes `timeout`.
  c10::intrusive_ptr<ProcessGroupChorus> split(int color, int key, std::chrono::milliseconds timeout);
  // Elastic jobs: chorusCommShrink of this group (after an error: its pending work is aborted and the survivors,
  // found among themselves when `exclude` is empty, form the new group; with `exclude`, a healthy group leaves those
  // ranks out) and chorusCommGrow (every rank of this group with the id rank 0 made by growId(), and the new
  // processes with joinGrown). The new group takes `timeout`.
  c10::intrusive_ptr<ProcessGroupChorus> shrink(const std::vector<int>& exclude, std::chrono::milliseconds timeout);
  std::vector<uint8_t> growId();
  c10::intrusive_ptr<ProcessGroupChorus> grow(int newRanks, const std::vector<uint8_t>& id,
                                              std::chrono::milliseconds timeout);
  // `store`: the job's torch store, for monitored barriers (null: they are refused).
  static c10::intrusive_ptr<ProcessGroupChorus> joinGrown(int newRanks, const std::vector<uint8_t>& id, int rank,
                                                          c10::intrusive_ptr<c10d::Store> store,
                                                          std::chrono::milliseconds timeout);

  const std::string getBackendName() const override { return "chorus"; }

  // Seconds per in-place float32 chorusAllReduce of `bytes`, made `iters` times directly on the C ABI (blocking):
  // the baseline for the torch layer's overhead (perf/torch/collective_bench.py overhead). Collective.
  double timeCAllReduce(size_t bytes, int iters);
  // The flight recorder of the group's communicator (docs/hangs.md): its newest `newest` calls as JSON (0: all it
  // keeps), and a dump to `path` ("": this rank's file in CHORUS_FLIGHT_DIR). Never wait for the group's work.
  std::string flightRecord(int newest);
  void dumpFlightRecord(const std::string& path);

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts = c10d::BroadcastOptions()) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts = c10d::AllreduceOptions()) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(
      std::vector<at::Tensor>& tensors,
      const c10d::AllreduceCoalescedOptions& opts = c10d::AllreduceCoalescedOptions()) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors,
                                        const c10d::ReduceOptions& opts = c10d::ReduceOptions()) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts = c10d::AllgatherOptions()) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::AllgatherOptions& opts = c10d::AllgatherOptions()) override;
  c10::intrusive_ptr<c10d::Work> allgather_coalesced(
      std::vector<std::vector<at::Tensor>>& outputLists, std::vector<at::Tensor>& inputs,
      const c10d::AllgatherOptions& opts = c10d::AllgatherOptions()) override;
  c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor>& tensors, int tag) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
                                        const c10d::GatherOptions& opts = c10d::GatherOptions()) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
                                         const c10d::ScatterOptions& opts = c10d::ScatterOptions()) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(
      std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
      const c10d::ReduceScatterOptions& opts = c10d::ReduceScatterOptions()) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(
      at::Tensor& output, at::Tensor& input,
      const c10d::ReduceScatterOptions& opts = c10d::ReduceScatterOptions()) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
                                               std::vector<int64_t>& outputSplits, std::vector<int64_t>& inputSplits,
                                               const c10d::AllToAllOptions& opts = c10d::AllToAllOptions()) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
                                          const c10d::AllToAllOptions& opts = c10d::AllToAllOptions()) override;
  // batch_isend_irecv: the sends and receives made between these two are issued together, as one group (each
  // one alone could wait for a peer that is itself waiting: a receive before a send on both sides).
  void startCoalescing() override;
  void endCoalescing(std::vector<c10::intrusive_ptr<c10d::Work>>& reqs) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dstRank, int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int srcRank, int tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts = c10d::BarrierOptions()) override;
  // Gloo's monitored barrier, through the store (so that its own timeout, often seconds, applies and a failure
  // leaves the communicator usable): every rank reports to rank 0, which names the ranks that did not come within
  // the timeout (the first, or all with waitAllRanks) and otherwise releases them.
  void monitoredBarrier(const c10d::BarrierOptions& opts, bool waitAllRanks = false) override;
  void setSequenceNumberForGroup() override {}
  uint64_t getSequenceNumberForGroup() override { return sequence_; }

 private:
  // The Chorus calls of one torch call, made on the stream they are given.
  using Calls = std::function<void(chorusStream_t)>;
  // Makes `calls` on `stream` (between a group start and end when `grouped`); throws naming `call` when a call is
  // refused at once.
  void makeCalls(const char* call, const Calls& calls, bool grouped, chorusStream_t stream);
  // makeCalls on the host stream, and an event recorded after them.
  std::shared_ptr<class StreamEvent> issue(const char* call, const Calls& calls, bool grouped);
  // The calls where the tensors are (CPU: issue(); CUDA: cuda_), and the Work that waits for them. `keep` holds
  // every tensor they touch until they are done; `finish` runs after them.
  c10::intrusive_ptr<c10d::Work> queue(c10d::OpType type, const char* call, const Calls& calls,
                                       std::vector<at::Tensor> outputs, std::vector<at::Tensor> keep,
                                       std::function<void()> finish = {}, bool grouped = false);
  // Allreduces each tensor (in one group when `grouped`: fused where small).
  c10::intrusive_ptr<c10d::Work> allreduceEach(std::vector<at::Tensor>& tensors, const c10d::ReduceOp& op,
                                               c10d::OpType type, const char* call, bool grouped);
  // A sparse COO tensor's SUM over the group, as Gloo does it: every rank's entries gathered, then added up (the
  // result replaces the tensor's contents).
  c10::intrusive_ptr<c10d::Work> sparseAllreduce(at::Tensor& tensor, const c10d::ReduceOp& op);
  // Throws a RuntimeError naming `call` and Chorus's message unless r is chorusSuccess.
  void check(chorusResult_t r, const char* call) const;

  // A send or receive held for the batch being coalesced.
  struct HeldCall {
    bool send;
    at::Tensor tensor;  // contiguous
    int peer;
    c10::intrusive_ptr<class ChorusWork> work;
  };
  // chorusSend or chorusRecv of the whole tensor with `peer`, on `stream`.
  chorusResult_t sendOrRecv(bool send, const at::Tensor& t, int peer, chorusStream_t stream);
  // A send or receive: queued now, or held for the batch when coalescing.
  c10::intrusive_ptr<c10d::Work> pointToPoint(bool send, std::vector<at::Tensor>& tensors, int peer);

  chorusComm_t comm_ = nullptr;
  SharedComm sharedComm_;  // owns comm_ (destroyed with the last Work on CUDA tensors that may use it)
  c10::intrusive_ptr<c10d::Store> store_;
  std::string storePrefix_;
  uint64_t splits_ = 0;             // splits made of this group (every rank counts each one)
  // Whether this group is the world chorusrun started (its store, served by chorusrun, outlives every rank).
  static bool launchedByChorusrun(int rank, int size);
  // Meets the other ranks through torch's store: rank 0 publishes a unique id there (its process serves the
  // communicator's rendezvous).
  void initThroughTorchStore(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size, chorusConfig_t& config);
  uint64_t reshapes_ = 0;           // shrinks and grows made of this group (every rank that takes part counts them)
  // Adopts a communicator made by shrink or grow of this group.
  c10::intrusive_ptr<ProcessGroupChorus> adopt(chorusComm_t comm, const std::string& prefix);
  uint64_t monitoredBarriers_ = 0;  // monitored barriers made on this group
  bool coalescing_ = false;
  std::vector<HeldCall> held_;
  chorusStream_t stream_ = nullptr;  // where calls on CPU tensors run
  std::unique_ptr<CudaCalls> cuda_;  // calls on CUDA tensors (null when this build has no CUDA)
  uint64_t sequence_ = 0;
};

}  // namespace chorus_torch
