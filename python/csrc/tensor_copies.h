// What the process group's calls do to torch's tensors around Chorus's calls: contiguous copies where needed, the
// results copied back, list-shaped arguments flattened and unflattened, argument checks.
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <vector>

namespace chorus_torch {

// Throws, naming `call`, unless t is on the CPU (for what only host buffers can do).
void requireCpu(const at::Tensor& t, const char* call);
// Throws, naming `call`, unless t is on the CPU, or on a CUDA device and this build takes CUDA tensors.
void requireSupportedDevice(const at::Tensor& t, const char* call);
// The one device every defined tensor of a and b is on (the CPU when there is none); throws, naming `call`, when
// they are on several.
at::Device deviceOf(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b, const char* call);
// A contiguous tensor with t's data (t itself when it is contiguous already).
at::Tensor contiguousOf(const at::Tensor& t, const char* call);
// The whole list as one flat tensor, in order (for list-shaped calls).
at::Tensor flatOf(const std::vector<at::Tensor>& list);
// Copies the flat tensor's consecutive pieces into the list's tensors.
void unflattenInto(const at::Tensor& flat, std::vector<at::Tensor>& list);
// What finishes a call that worked on contiguous copies: the results copied back into the caller's tensors (nothing
// when every one of them was contiguous already).
std::function<void()> copyBack(std::vector<at::Tensor> targets, std::vector<at::Tensor> work);
std::function<void()> copyBack(const at::Tensor& target, const at::Tensor& work);
// Throws, naming `call`, unless every tensor of the list has like's number of elements and dtype.
void requireSameShape(const std::vector<at::Tensor>& list, const at::Tensor& like, const char* call);

}  // namespace chorus_torch
