#include "device/scoped_device.h"

#ifdef CHORUS_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "core/error.h"
#include "core/cuda_error.h"

namespace chorus {

ScopedCudaDevice::ScopedCudaDevice(int device, const std::string& context) {
  if (device < 0) return;
#ifdef CHORUS_HAVE_CUDA
  int current = -1;
  CHORUS_CUDA_CHECK(context, cudaGetDevice(&current));
  if (current == device) return;
  CHORUS_CUDA_CHECK(context + " (device " + std::to_string(device) + ")", cudaSetDevice(device));
  previous_ = current;
#else
  throw Error(chorusUnhandledCudaError,
              context + ": CUDA device " + std::to_string(device) + " requested, but this build has no CUDA support");
#endif
}

ScopedCudaDevice::~ScopedCudaDevice() {
#ifdef CHORUS_HAVE_CUDA
  if (previous_ >= 0) cudaSetDevice(previous_);
#else
  (void)previous_;
#endif
}

}  // namespace chorus
