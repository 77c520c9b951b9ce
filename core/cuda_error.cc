#include "core/cuda_error.h"

#ifdef CHORUS_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "core/error.h"

namespace chorus {

std::string cudaErrorText(int error) {
#ifdef CHORUS_HAVE_CUDA
  return cudaGetErrorString(static_cast<cudaError_t>(error));
#else
  return "CUDA error " + std::to_string(error) + " (this build has no CUDA support)";
#endif
}

void throwCudaError(const std::string& context, const char* call, int error) {
  throw Error(chorusUnhandledCudaError, context + ": " + call + " failed: " + cudaErrorText(error));
}

}  // namespace chorus
