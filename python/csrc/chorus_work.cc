#include "chorus_work.h"

#include <ATen/Parallel.h>
#include <c10/util/Exception.h>

#include <string>

namespace chorus_torch {

ChorusWork::ChorusWork(c10d::OpType type, const char* call, chorusEvent_t event, std::vector<at::Tensor> outputs,
                       std::vector<at::Tensor> keep, std::function<void()> finish)
    : c10d::Work(-1, type),
      call_(call),
      event_(event),
      outputs_(std::move(outputs)),
      keep_(std::move(keep)),
      finish_(std::move(finish)) {}

ChorusWork::~ChorusWork() {
  chorusEventSynchronize(event_);
  chorusEventDestroy(event_);
}

void ChorusWork::conclude(chorusResult_t status) {
  if (concluded_) return;
  concluded_ = true;
  if (status != chorusSuccess) {
    exception_ = std::make_exception_ptr(std::runtime_error(std::string("ProcessGroupChorus: ") + call_ + " failed: " +
                                                            chorusGetErrorString(status) + ": " +
                                                            chorusGetLastError(nullptr)));
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
  const chorusResult_t r = chorusEventQuery(event_);
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
  const chorusResult_t r = chorusEventSynchronize(event_);
  std::lock_guard<std::mutex> lock(mutex_);
  conclude(r);
  if (exception_) std::rethrow_exception(exception_);
  return true;
}

c10::intrusive_ptr<c10::ivalue::Future> ChorusWork::getFuture() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (future_) return future_;
  future_ = c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()));
  c10::intrusive_ptr<ChorusWork> self = c10::intrusive_ptr<ChorusWork>::reclaim_copy(this);
  at::launch([self] {
    const chorusResult_t r = chorusEventSynchronize(self->event_);
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
