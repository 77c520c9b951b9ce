// The DeviceApi of the CUDA runtime. In builds without CUDA it still exists: available() is false, locate() says
// kHost, and every other call throws chorusUnhandledCudaError.
#pragma once

#include "device/device_api.h"

namespace chorus {

// The process's CUDA device API (one instance, made on first use, never destroyed so that no exit-time teardown
// races the CUDA runtime's own).
DeviceApi& cudaDeviceApi();

}  // namespace chorus
