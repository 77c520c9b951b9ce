// Whether this process can use CUDA at all: a build with CUDA, a driver, and at least one device.
#pragma once

namespace chorus {

// True when CUDA was built in and the runtime sees a device. Decided on the first call (which initializes the
// driver, not a context) and cached; false with no driver or no device, logged once at INFO with the reason.
bool cudaAvailable();

}  // namespace chorus
