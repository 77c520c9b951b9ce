// torch.distributed's backend "chorus": a c10d::ProcessGroup over one Chorus communicator. Every call is queued on
// the group's host stream and returns a ChorusWork at once; the communicator is met through the store torch hands
// the backend (rank 0 publishes a unique id there, as ProcessGroupNCCL does).
#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "chorus/chorus.h"

namespace chorus_torch {

class ProcessGroupChorus : public c10d::ProcessGroup {
 public:
  ProcessGroupChorus(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                     std::chrono::milliseconds timeout);
  // Adopts `comm` (a split of another group's communicator), with a host stream of its own.
  ProcessGroupChorus(chorusComm_t comm, int rank, int size);
  ~ProcessGroupChorus() override;

  // What torch.distributed.Backend.register_backend calls.
  static c10::intrusive_ptr<c10d::ProcessGroup> create(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                       int size, const std::chrono::duration<float>& timeout);

  // torch.distributed.new_group through chorusCommSplit: every rank of this group calls it in the same order; ranks
  // with `color` CHORUS_SPLIT_NOCOLOR get null, the others a group over the ranks of their color, ordered by `key`.
  // The child shares this group's connections (CHORUS_SPLIT_SHARE) and takes `timeout`.
  c10::intrusive_ptr<ProcessGroupChorus> split(int color, int key, std::chrono::milliseconds timeout);

  const std::string getBackendName() const override { return "chorus"; }

  // Seconds per in-place float32 chorusAllReduce of `bytes`, made `iters` times directly on the C ABI (blocking):
  // the baseline for the torch layer's overhead (perf/torch/collective_bench.py overhead). Collective.
  double timeCAllReduce(size_t bytes, int iters);

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
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dstRank, int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int srcRank, int tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts = c10d::BarrierOptions()) override;
  void monitoredBarrier(const c10d::BarrierOptions& opts, bool waitAllRanks = false) override;
  void setSequenceNumberForGroup() override {}
  uint64_t getSequenceNumberForGroup() override { return sequence_; }

 private:
  // Queues what `calls` makes (Chorus calls on stream_, between a group start and end when `grouped`), records an
  // event after it, and returns the Work; throws naming `call` when a call is refused at once.
  c10::intrusive_ptr<c10d::Work> queue(c10d::OpType type, const char* call, const std::function<void()>& calls,
                                       std::vector<at::Tensor> outputs, std::vector<at::Tensor> keep,
                                       std::function<void()> finish = {}, bool grouped = false);
  // Allreduces each tensor (in one group when `grouped`: fused where small).
  c10::intrusive_ptr<c10d::Work> allreduceEach(std::vector<at::Tensor>& tensors, const c10d::ReduceOp& op,
                                               c10d::OpType type, const char* call, bool grouped);
  // Throws a RuntimeError naming `call` and Chorus's message unless r is chorusSuccess.
  void check(chorusResult_t r, const char* call) const;

  chorusComm_t comm_ = nullptr;
  chorusStream_t stream_ = nullptr;
  uint64_t sequence_ = 0;
};

}  // namespace chorus_torch
