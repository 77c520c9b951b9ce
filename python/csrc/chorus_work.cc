#include "chorus_work.h"

#include <ATen/Parallel.h>
#include <c10/util/Exception.h>

#include <string>

namespace chorus_torch {

ChorusWork::ChorusWork(c10d::OpType type, const char* call, std::shared_ptr<StreamEvent> event,
                       std::vector<at::Tensor> outputs, std::vector<at::Tensor> keep, std::function<void()> finish)
    : c10d::Work(-1, type),
      call_(call),
      event_(std::move(event)),
      outputs_(std::move(outputs)),
      keep_(std::move(keep)),
      finish_(std::move(finish)) {}

ChorusWork::~ChorusWork() {
  if (event_) chorusEventSynchronize(event_->get());
}

int ChorusWork::sourceRank() const {
  TORCH_CHECK(source_ != nullptr, "ProcessGroupChorus: ", call_, ": sourceRank is a receive from any rank's");
  TORCH_CHECK(chorusEventQuery(event()) == chorusSuccess, "ProcessGroupChorus: ", call_,
              ": sourceRank before the receive completed (wait for it first)");
  return *source_;
}

void ChorusWork::attach(std::shared_ptr<StreamEvent> event) {
  std::lock_guard<std::mutex> lock(mutex_);
  event_ = std::move(event);
}

chorusEvent_t ChorusWork::event() const {
  std::lock_guard<std::mutex> lock(mutex_);
  TORCH_CHECK(event_ != nullptr, "ProcessGroupChorus: ", call_,
              ": waited for inside its batch (batch_isend_irecv issues the batch when it ends)");
  return event_->get();
}

void ChorusWork::conclude(chorusResult_t status) {
  if (concluded_) return;
  concluded_ = true;
  if (status != chorusSuccess) {
    // A timeout says so in the words torch's tests and users look for ("Timed out").
    const std::string what = status == chorusTimeout ? "Timed out (the process group's timeout)"
                                                     : std::string(chorusGetErrorString(status));
    exception_ = std::make_exception_ptr(std::runtime_error(std::string("ProcessGroupChorus: ") + call_ + " failed: " +
                                                            what + ": " + chorusGetLastError(nullptr)));
    return;
  }
  if (finish_) {
    try {
      finish_();
    } catch (...) {
      exception_ = std::current_exception();
    }
  }
}

bool ChorusWork::isCompleted() {
  const chorusResult_t r = chorusEventQuery(event());
  if (r == chorusInProgress) return false;
  std::lock_guard<std::mutex> lock(mutex_);
  conclude(r);
  return true;
}

bool ChorusWork::isSuccess() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return concluded_ && !exception_;
}

std::exception_ptr ChorusWork::exception() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return exception_;
}

bool ChorusWork::wait(std::chrono::milliseconds) {
  // The communicator's own timeout bounds every wait inside the calls (the process group's timeout).
  const chorusResult_t r = chorusEventSynchronize(event());
  std::lock_guard<std::mutex> lock(mutex_);
  conclude(r);
  if (exception_) std::rethrow_exception(exception_);
  return true;
}

c10::intrusive_ptr<c10::ivalue::Future> ChorusWork::getFuture() {
  const chorusEvent_t event = this->event();
  std::lock_guard<std::mutex> lock(mutex_);
  if (future_) return future_;
  future_ = c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()));
  c10::intrusive_ptr<ChorusWork> self = c10::intrusive_ptr<ChorusWork>::reclaim_copy(this);
  at::launch([self, event] {
    const chorusResult_t r = chorusEventSynchronize(event);
    std::exception_ptr failure;
    {
      std::lock_guard<std::mutex> lock(self->mutex_);
      self->conclude(r);
      failure = self->exception_;
    }
    if (failure) {
      self->future_->setError(failure);
    } else {
      self->future_->markCompleted(c10::IValue(self->outputs_));
    }
  });
  return future_;
}

}  // namespace chorus_torch
