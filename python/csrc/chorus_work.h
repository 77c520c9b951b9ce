// A torch Work for calls queued on a Chorus host stream: an event recorded after them says when they are done;
// wait() raises Chorus's error message on failure; what must happen after the calls (copying results into list or
// non-contiguous tensors) runs once, on the thread that first sees them done.
#pragma once

#include <ATen/ATen.h>
#include <ATen/core/ivalue.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "chorus/chorus.h"

namespace chorus_torch {

// An event recorded after calls on a host stream; destroyed (after the calls are done) with its last Work.
class StreamEvent {
 public:
  explicit StreamEvent(chorusEvent_t event) : event_(event) {}
  ~StreamEvent() {
    chorusEventSynchronize(event_);
    chorusEventDestroy(event_);
  }
  StreamEvent(const StreamEvent&) = delete;
  StreamEvent& operator=(const StreamEvent&) = delete;
  chorusEvent_t get() const { return event_; }

 private:
  chorusEvent_t event_;
};

class ChorusWork : public c10d::Work {
 public:
  // `event` marks the end of the calls (null for a call held in a batch until attach()); `keep` holds every tensor
  // they touch until they are done; `finish` runs after them (may be empty).
  ChorusWork(c10d::OpType type, const char* call, std::shared_ptr<StreamEvent> event, std::vector<at::Tensor> outputs,
             std::vector<at::Tensor> keep, std::function<void()> finish);
  // Gives a call held in a batch (batch_isend_irecv) the event of the batch, once the batch is issued.
  void attach(std::shared_ptr<StreamEvent> event);
  // Waits for the calls first: the tensors they use must outlive them.
  ~ChorusWork() override;

  bool isCompleted() override;
  bool isSuccess() const override;
  std::exception_ptr exception() const override;
  bool wait(std::chrono::milliseconds timeout = kNoTimeout) override;
  void synchronize() override {}
  std::vector<at::Tensor> result() override { return outputs_; }
  // A receive from any rank: where the call writes the sender's rank (read by sourceRank() once done).
  void setSource(std::shared_ptr<int> source) { source_ = std::move(source); }
  int sourceRank() const override;
  // Completed from a task of torch's thread pool that waits for the calls (DDP's communication hooks use it).
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;

 private:
  // Records the outcome of status (chorusSuccess or an error) and runs finish_, once. Under mutex_.
  void conclude(chorusResult_t status);
  // The event, or an error naming the call when its batch has not been issued yet.
  chorusEvent_t event() const;

  const char* call_;
  std::shared_ptr<StreamEvent> event_;
  std::vector<at::Tensor> outputs_;
  std::vector<at::Tensor> keep_;
  std::shared_ptr<int> source_;
  std::function<void()> finish_;
  mutable std::mutex mutex_;
  bool concluded_ = false;
  std::exception_ptr exception_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

}  // namespace chorus_torch
