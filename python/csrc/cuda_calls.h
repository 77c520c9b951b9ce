// CUDA tensors, as ProcessGroupNCCL treats them: a call's Chorus calls are enqueued on a CUDA stream of the group's
// (one per device, from torch's stream pool) that first waits for what torch queued before on the device's current
// stream; its Work's wait() makes the current stream wait for them (the host goes on), and the caching allocator is
// told the tensors are in use on that stream. Built only where torch has CUDA (cuda_calls.cc); elsewhere
// cuda_calls_absent.cc says so. No CUDA header is seen through this file.
#pragma once

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <functional>
#include <memory>
#include <vector>

#include "chorus/chorus.h"

namespace chorus_torch {

// A communicator shared by its process group and the Works that may outlive it; destroyed with the last of them.
using SharedComm = std::shared_ptr<std::remove_pointer_t<chorusComm_t>>;

class CudaCalls {
 public:
  virtual ~CudaCalls() = default;
  // The stream to pass Chorus for a call whose tensors are on `device`, ordered after the device's current stream.
  virtual chorusStream_t begin(const at::Device& device) = 0;
  // After the call's Chorus calls were enqueued on begin()'s stream: `finish` (copies into the caller's tensors) is
  // enqueued after them, every tensor is recorded as used there, and the Work returned waits for all of it.
  virtual c10::intrusive_ptr<c10d::Work> end(c10d::OpType type, const char* call, const at::Device& device,
                                             std::vector<at::Tensor> outputs, const std::vector<at::Tensor>& keep,
                                             const std::function<void()>& finish) = 0;
};

// True when this build takes CUDA tensors.
bool cudaCallsBuilt();
// The group's CudaCalls over `comm`; null when this build has no CUDA.
std::unique_ptr<CudaCalls> makeCudaCalls(SharedComm comm);

}  // namespace chorus_torch
