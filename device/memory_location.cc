#include "device/memory_location.h"

#ifdef CHORUS_HAVE_CUDA
#include <cuda_runtime_api.h>

#include <sstream>

#include "core/cuda_error.h"
#endif

#include "core/device_runtime.h"

namespace chorus {

MemoryLocation locateBuffer(const void* p, int* device) {
#ifdef CHORUS_HAVE_CUDA
  if (p == nullptr || !cudaAvailable()) return MemoryLocation::kHost;
  cudaPointerAttributes attributes{};
  const cudaError_t error = cudaPointerGetAttributes(&attributes, p);
  // Since CUDA 11 an unregistered host pointer is cudaSuccess with type cudaMemoryTypeUnregistered; older runtimes
  // said cudaErrorInvalidValue, which means the same thing and must not stay behind as the last error.
  if (error == cudaErrorInvalidValue) {
    cudaGetLastError();
    return MemoryLocation::kHost;
  }
  if (error != cudaSuccess) {
    cudaGetLastError();
    std::ostringstream context;
    context << "locating buffer " << p;
    throwCudaError(context.str(), "cudaPointerGetAttributes", error);
  }
  if (attributes.type != cudaMemoryTypeDevice && attributes.type != cudaMemoryTypeManaged) {
    return MemoryLocation::kHost;
  }
  if (device != nullptr) *device = attributes.device;
  return MemoryLocation::kDevice;
#else
  (void)p;
  (void)device;
  return MemoryLocation::kHost;
#endif
}

const char* memoryLocationName(MemoryLocation location) {
  return location == MemoryLocation::kDevice ? "device" : "host";
}

}  // namespace chorus
