// Checked CUDA runtime calls: a failed call becomes chorus::Error(chorusUnhandledCudaError, ...) that names the
// caller's context, the call and the runtime's error text. Usable without CUDA headers (errors travel as int).
#pragma once

#include <string>

namespace chorus {

// The CUDA runtime's text for `error` (a cudaError_t), e.g. "invalid argument"; a fixed text without CUDA.
std::string cudaErrorText(int error);

// Throws chorusUnhandledCudaError: "<context>: <call> failed: <cudaErrorText(error)>".
[[noreturn]] void throwCudaError(const std::string& context, const char* call, int error);

}  // namespace chorus

// Evaluates `call` (a CUDA runtime call returning cudaError_t); unless it returns cudaSuccess (0), throws
// chorusUnhandledCudaError naming `context` (any expression convertible to std::string, evaluated only on failure)
// and the call's source text.
#define CHORUS_CUDA_CHECK(context, call)                              \
  do {                                                                \
    const int chorus_cuda_error_ = static_cast<int>(call);            \
    if (chorus_cuda_error_ != 0) {                                    \
      ::chorus::throwCudaError((context), #call, chorus_cuda_error_); \
    }                                                                 \
  } while (0)
