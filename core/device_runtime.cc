#include "core/device_runtime.h"

#ifdef CHORUS_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "core/logging.h"

namespace chorus {
namespace {

#ifdef CHORUS_HAVE_CUDA
bool probeCuda() {
  int devices = 0;
  const cudaError_t error = cudaGetDeviceCount(&devices);
  if (error != cudaSuccess) {
    // Clears the runtime's last error, so that it does not surface in an unrelated later check.
    cudaGetLastError();
    CHORUS_INFO(-1, "CUDA unavailable: " << cudaGetErrorString(error));
    return false;
  }
  if (devices == 0) {
    CHORUS_INFO(-1, "CUDA unavailable: " << cudaGetErrorString(cudaErrorNoDevice));
    return false;
  }
  CHORUS_INFO(-1, "CUDA available: " << devices << " device(s)");
  return true;
}
#endif

}  // namespace

bool cudaAvailable() {
#ifdef CHORUS_HAVE_CUDA
  static const bool available = probeCuda();
  return available;
#else
  return false;
#endif
}

}  // namespace chorus
