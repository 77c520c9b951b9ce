// cuda_calls.h where torch has CUDA. Never run yet: the torch on the machines Chorus is developed on is CPU-only; this
// file is compiled there against torch's CUDA headers (the chorus_torch_cuda_check target) but not linked.
#include "cuda_calls.h"

#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>

#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

namespace chorus_torch {
namespace {

// The communicator's error once Chorus has recorded one, else chorusSuccess (a call on a CUDA stream fails there,
// after the host has gone on: the communicator's async error is where it shows).
chorusResult_t asyncFailure(const SharedComm& comm) {
  chorusResult_t failure = chorusSuccess;
  if (chorusCommGetAsyncError(comm.get(), &failure) != chorusSuccess) return chorusSuccess;
  return failure == chorusInProgress ? chorusSuccess : failure;
}

// Raises asyncFailure, naming `call`.
void raiseIfFailed(const SharedComm& comm, const char* call) {
  const chorusResult_t failure = asyncFailure(comm);
  if (failure == chorusSuccess) return;
  throw std::runtime_error(std::string("ProcessGroupChorus: ") + call + " failed: " + chorusGetErrorString(failure) +
                           ": " + chorusGetLastError(comm.get()));
}

// The Work of a call on CUDA tensors: done when the event recorded after its calls (and the copies that finish it) has
// passed on the group's stream.
class CudaWork : public c10d::Work {
 public:
  CudaWork(c10d::OpType type, const char* call, SharedComm comm, at::Device device,
           std::shared_ptr<at::cuda::CUDAEvent> done, std::vector<at::Tensor> outputs,
           c10::intrusive_ptr<c10::ivalue::Future> future)
      : c10d::Work(-1, type),
        call_(call),
        comm_(std::move(comm)),
        device_(device),
        done_(std::move(done)),
        outputs_(std::move(outputs)),
        future_(std::move(future)) {}

  bool isCompleted() override {
    raiseIfFailed(comm_, call_);
    return done_->query();
  }
  bool isSuccess() const override { return asyncFailure(comm_) == chorusSuccess && done_->query(); }
  // As ProcessGroupNCCL's: the caller's current stream waits for the calls; the host goes on. The communicator's
  // timeout bounds the calls themselves.
  bool wait(std::chrono::milliseconds) override {
    raiseIfFailed(comm_, call_);
    synchronize();
    return true;
  }
  void synchronize() override { done_->block(c10::cuda::getCurrentCUDAStream(device_.index())); }
  std::vector<at::Tensor> result() override { return outputs_; }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }

 private:
  const char* call_;
  SharedComm comm_;
  at::Device device_;
  std::shared_ptr<at::cuda::CUDAEvent> done_;
  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

class TorchCudaCalls : public CudaCalls {
 public:
  explicit TorchCudaCalls(SharedComm comm) : comm_(std::move(comm)) {}

  chorusStream_t begin(const at::Device& device) override {
    c10::cuda::CUDAGuard onDevice(device);
    const c10::cuda::CUDAStream side = streamOf(device);
    at::cuda::CUDAEvent ready;
    ready.record(c10::cuda::getCurrentCUDAStream(device.index()));
    ready.block(side);
    return side.stream();
  }

  c10::intrusive_ptr<c10d::Work> end(c10d::OpType type, const char* call, const at::Device& device,
                                     std::vector<at::Tensor> outputs, const std::vector<at::Tensor>& keep,
                                     const std::function<void()>& finish) override {
    const c10::cuda::CUDAStream side = streamOf(device);
    c10::cuda::CUDAStreamGuard onSide(side);  // what follows is enqueued on the group's stream
    if (finish) finish();
    auto inUseOnSide = [&](const std::vector<at::Tensor>& list) {
      for (const at::Tensor& t : list) {
        if (t.defined()) c10::cuda::CUDACachingAllocator::recordStream(t.storage().data_ptr(), side);
      }
    };
    inUseOnSide(outputs);
    inUseOnSide(keep);
    auto done = std::make_shared<at::cuda::CUDAEvent>();
    done->record(side);
    // Completed now, as ProcessGroupNCCL's: a CUDA future records its events on the current (the group's) stream, so
    // that whoever uses the value waits for the calls on the device, not on the host.
    auto future = c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()),
                                                           std::vector<c10::Device>{device});
    future->markCompleted(c10::IValue(outputs));
    return c10::make_intrusive<CudaWork>(type, call, comm_, device, std::move(done), std::move(outputs),
                                         std::move(future));
  }

 private:
  c10::cuda::CUDAStream streamOf(const at::Device& device) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = streams_.find(device.index());
    if (it == streams_.end()) {
      it = streams_.emplace(device.index(), c10::cuda::getStreamFromPool(/*isHighPriority=*/false, device.index()))
               .first;
    }
    return it->second;
  }

  SharedComm comm_;
  std::mutex mutex_;
  std::map<c10::DeviceIndex, c10::cuda::CUDAStream> streams_;
};

}  // namespace

bool cudaCallsBuilt() { return true; }

std::unique_ptr<CudaCalls> makeCudaCalls(SharedComm comm) { return std::make_unique<TorchCudaCalls>(std::move(comm)); }

}  // namespace chorus_torch
