#include "device/device_api.h"

#include "core/params.h"
#include "device/cuda_device_api.h"
#include "device/emulated_device_api.h"
#include "device/stream_flag.h"

namespace chorus {

DeviceApi& emulatedDeviceApi() {
  // Never destroyed: streams may still wait on flags at exit, and joining their workers then would hang.
  static EmulatedDeviceApi* api = new EmulatedDeviceApi();
  return *api;
}

DeviceApi& deviceApi() {
  // Read on every call rather than once: forked test workers set the knob after their parent has looked.
  static const char* const kName = "CHORUS_DEVICE_EMULATION";
  const bool emulate = params::asInt(kName, params::deviceEmulation(), 0, 1) == 1;
  return emulate ? emulatedDeviceApi() : cudaDeviceApi();
}

void raiseStreamFlag(DeviceApi& api, uint32_t* flag, uint32_t value) {
  __atomic_store_n(flag, value, __ATOMIC_RELEASE);
  api.flagRaised(flag);
}

}  // namespace chorus
