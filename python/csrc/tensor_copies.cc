#include "tensor_copies.h"

#include <c10/util/Exception.h>

#include "cuda_calls.h"

namespace chorus_torch {

void requireCpu(const at::Tensor& t, const char* call) {
  TORCH_CHECK(t.device().is_cpu(), "ProcessGroupChorus: ", call, ": takes CPU tensors only, not ", t.device());
}

void requireSupportedDevice(const at::Tensor& t, const char* call) {
  TORCH_CHECK(t.device().is_cpu() || t.device().is_cuda(), "ProcessGroupChorus: ", call,
              ": takes CPU or CUDA tensors, not ", t.device());
  TORCH_CHECK(!t.device().is_cuda() || cudaCallsBuilt(), "ProcessGroupChorus: ", call,
              ": CUDA tensors need chorus_torch built against a torch with CUDA; this one was built without");
}

at::Device deviceOf(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b, const char* call) {
  at::Device device(at::kCPU);
  bool first = true;
  for (const std::vector<at::Tensor>* list : {&a, &b}) {
    for (const at::Tensor& t : *list) {
      if (!t.defined()) continue;
      TORCH_CHECK(first || t.device() == device, "ProcessGroupChorus: ", call,
                  ": every tensor must be on one device (", device, " and ", t.device(), ")");
      device = t.device();
      first = false;
    }
  }
  return device;
}

at::Tensor contiguousOf(const at::Tensor& t, const char* call) {
  requireSupportedDevice(t, call);
  return t.is_contiguous() ? t : t.contiguous();
}

at::Tensor flatOf(const std::vector<at::Tensor>& list) {
  std::vector<at::Tensor> flat;
  flat.reserve(list.size());
  for (const at::Tensor& t : list) flat.push_back(t.reshape({-1}));
  return at::cat(flat);
}

void unflattenInto(const at::Tensor& flat, std::vector<at::Tensor>& list) {
  int64_t at = 0;
  for (at::Tensor& t : list) {
    t.copy_(flat.narrow(0, at, t.numel()).view(t.sizes()));
    at += t.numel();
  }
}

std::function<void()> copyBack(std::vector<at::Tensor> targets, std::vector<at::Tensor> work) {
  bool same = true;
  for (size_t i = 0; i < targets.size(); ++i) same = same && targets[i].is_same(work[i]);
  if (same) return {};
  return [targets, work]() mutable {
    for (size_t i = 0; i < targets.size(); ++i) {
      if (!targets[i].is_same(work[i])) targets[i].copy_(work[i]);
    }
  };
}
std::function<void()> copyBack(const at::Tensor& target, const at::Tensor& work) {
  return copyBack(std::vector<at::Tensor>{target}, std::vector<at::Tensor>{work});
}

void requireSameShape(const std::vector<at::Tensor>& list, const at::Tensor& like, const char* call) {
  for (const at::Tensor& t : list) {
    TORCH_CHECK(t.numel() == like.numel() && t.scalar_type() == like.scalar_type(), "ProcessGroupChorus: ", call,
                ": every tensor of the list must have the input's size and dtype");
  }
}

}  // namespace chorus_torch
