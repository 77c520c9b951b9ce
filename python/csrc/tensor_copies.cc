#include "tensor_copies.h"

#include <c10/util/Exception.h>

namespace chorus_torch {

void requireCpu(const at::Tensor& t, const char* call) {
  TORCH_CHECK(t.device().is_cpu(), "ProcessGroupChorus: ", call,
              ": only CPU tensors are supported by this build (the Debian torch here has no CUDA)");
}

// A contiguous tensor with t's data (t itself when it is contiguous already).
at::Tensor contiguousOf(const at::Tensor& t, const char* call) {
  requireCpu(t, call);
  return t.is_contiguous() ? t : t.contiguous();
}

// The whole list as one flat tensor, in order (for list-shaped calls).
at::Tensor flatOf(const std::vector<at::Tensor>& list) {
  std::vector<at::Tensor> flat;
  flat.reserve(list.size());
  for (const at::Tensor& t : list) flat.push_back(t.reshape({-1}));
  return at::cat(flat);
}

// Copies the flat tensor's consecutive pieces into the list's tensors.
void unflattenInto(const at::Tensor& flat, std::vector<at::Tensor>& list) {
  int64_t at = 0;
  for (at::Tensor& t : list) {
    t.copy_(flat.narrow(0, at, t.numel()).view(t.sizes()));
    at += t.numel();
  }
}

// What finishes a call that worked on contiguous copies: the results copied back into the caller's tensors (nothing
// when every one of them was contiguous already).
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
