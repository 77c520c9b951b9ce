// ProcessGroupChorus's sends and receives (alone, from any rank, batched by batch_isend_irecv) and its barriers.
#include <c10/util/Exception.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>

#include "chorus_work.h"
#include "process_group_chorus.h"
#include "tensor_copies.h"
#include "torch_types.h"

namespace chorus_torch {

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::recvAnysource(std::vector<at::Tensor>& tensors, int) {
  const char* call = "recv";
  TORCH_CHECK(tensors.size() == 1, "ProcessGroupChorus: recv takes one tensor");
  TORCH_CHECK(!coalescing_, "ProcessGroupChorus: a recv from any source cannot be part of batch_isend_irecv");
  requireCpu(tensors[0], call);  // Chorus receives from any rank into host buffers only
  at::Tensor t = contiguousOf(tensors[0], call);
  at::Tensor target = tensors[0];
  auto source = std::make_shared<int>(-1);
  auto work = queue(
      c10d::OpType::RECVANYSOURCE, call,
      [&](chorusStream_t s) {
        check(chorusRecvAny(t.data_ptr(), t.numel(), chorusTypeOf(t, call), source.get(), comm_, s),
              "chorusRecvAny");
      },
      tensors, {t}, copyBack(target, t));
  static_cast<ChorusWork*>(work.get())->setSource(source);
  return work;
}

chorusResult_t ProcessGroupChorus::sendOrRecv(bool send, const at::Tensor& t, int peer, chorusStream_t stream) {
  const chorusDataType_t type = chorusTypeOf(t, send ? "send" : "recv");
  return send ? chorusSend(t.data_ptr(), t.numel(), type, peer, comm_, stream)
              : chorusRecv(t.data_ptr(), t.numel(), type, peer, comm_, stream);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::pointToPoint(bool send, std::vector<at::Tensor>& tensors,
                                                                int peer) {
  const char* call = send ? "send" : "recv";
  TORCH_CHECK(tensors.size() == 1, "ProcessGroupChorus: ", call, " takes one tensor");
  at::Tensor t = contiguousOf(tensors[0], call);
  at::Tensor target = tensors[0];
  const c10d::OpType type = send ? c10d::OpType::SEND : c10d::OpType::RECV;
  if (coalescing_) {
    // Refused now rather than when the batch ends. A batch's Works wait for one host stream event; CUDA tensors
    // would need one CUDA event instead (not built yet).
    requireCpu(t, "batch_isend_irecv");
    chorusTypeOf(t, call);
    auto work = c10::make_intrusive<ChorusWork>(type, call, nullptr, tensors, std::vector<at::Tensor>{t},
                                                send ? std::function<void()>{} : copyBack(target, t));
    held_.push_back(HeldCall{send, t, peer, work});
    return work;
  }
  return queue(
      type, call, [&](chorusStream_t s) { check(sendOrRecv(send, t, peer, s), send ? "chorusSend" : "chorusRecv"); },
      tensors, {t}, send ? std::function<void()>{} : copyBack(target, t));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::send(std::vector<at::Tensor>& tensors, int dstRank, int) {
  return pointToPoint(true, tensors, dstRank);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::recv(std::vector<at::Tensor>& tensors, int srcRank, int) {
  return pointToPoint(false, tensors, srcRank);
}

void ProcessGroupChorus::startCoalescing() {
  TORCH_CHECK(!coalescing_, "ProcessGroupChorus: batches of sends and receives do not nest");
  coalescing_ = true;
}

void ProcessGroupChorus::endCoalescing(std::vector<c10::intrusive_ptr<c10d::Work>>&) {
  coalescing_ = false;
  std::vector<HeldCall> batch = std::move(held_);
  held_.clear();
  if (batch.empty()) return;
  const auto event = issue(
      "batch_isend_irecv",
      [&](chorusStream_t s) {
        for (const HeldCall& h : batch) check(sendOrRecv(h.send, h.tensor, h.peer, s), "batch_isend_irecv");
      },
      /*grouped=*/true);
  for (HeldCall& h : batch) h.work->attach(event);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupChorus::barrier(const c10d::BarrierOptions&) {
  return queue(
      c10d::OpType::BARRIER, "barrier", [&](chorusStream_t s) { check(chorusBarrier(comm_, s), "chorusBarrier"); },
      {}, {});
}

void ProcessGroupChorus::monitoredBarrier(const c10d::BarrierOptions& opts, bool waitAllRanks) {
  using Clock = std::chrono::steady_clock;
  const auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(opts.timeout);
  const auto end = Clock::now() + timeout;
  TORCH_CHECK(store_, "monitored_barrier: this group joined a grown group without a store (pass store= to "
                     "chorus_torch.join_grown)");
  const std::string key = storePrefix_ + "monitored_barrier/" + std::to_string(++monitoredBarriers_) + "/";
  auto remaining = [&] { return std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now()); };
  const std::string within = " in " + std::to_string(timeout.count()) + " ms";
  if (getRank() != 0) {
    store_->set(key + "arrived/" + std::to_string(getRank()), std::vector<uint8_t>{1});
    try {
      store_->wait({key + "released"}, std::max(remaining(), std::chrono::milliseconds(1)));
    } catch (const std::exception& e) {
      TORCH_CHECK(false, "Rank ", getRank(), " successfully reached monitoredBarrier, but received errors while "
                  "waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank. (", e.what(), ")");
    }
    return;
  }
  std::vector<int> failed;
  for (int r = 1; r < getSize(); ++r) {
    const auto left = remaining();
    // Out of time before any rank failed: rank 0 itself came too late (Gloo's wording). After a failure, with
    // waitAllRanks, every remaining rank still gets a look.
    TORCH_CHECK(left.count() > 0 || !failed.empty(), "Rank 0 timed out in monitoredBarrier after ", timeout.count(),
                " ms (ProcessGroupChorus)");
    try {
      store_->wait({key + "arrived/" + std::to_string(r)}, std::max(left, std::chrono::milliseconds(1)));
    } catch (const std::exception&) {
      TORCH_CHECK(waitAllRanks, "Rank ", r, " failed to pass monitoredBarrier", within,
                  " (ProcessGroupChorus; rank 0 waited for it through the store)");
      failed.push_back(r);
    }
  }
  if (!failed.empty()) {
    std::string ranks;
    for (int r : failed) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
    TORCH_CHECK(false, "Ranks ", ranks, " failed to pass monitoredBarrier", within, " (ProcessGroupChorus)");
  }
  store_->set(key + "released", std::vector<uint8_t>{1});
}

}  // namespace chorus_torch
