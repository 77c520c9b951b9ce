#include "device/device_api.h"

#include "core/emulation_library.h"
#include "core/error.h"
#include "core/params.h"
#include "device/cuda_device_api.h"
#include "device/device_emulation.h"
#include "device/stream_flag.h"

namespace chorus {
namespace {

// The emulated device, from this program or libchorus_emulation.so; a failed load is retried at the next call.
DeviceApi& emulatedDeviceApi() {
  static DeviceApi* const api = reinterpret_cast<decltype(&chorus_emulation_device_api)>(
      emulationEntry("chorus_emulation_device_api", "CHORUS_DEVICE_EMULATION"))();
  return *api;
}

}  // namespace

DeviceApi& deviceApi() {
  // Read on every call rather than once: forked test workers set the knob after their parent has looked.
  static const char* const kName = "CHORUS_DEVICE_EMULATION";
  const bool emulate = params::asInt(kName, params::deviceEmulation(), 0, 1) == 1;
  return emulate ? emulatedDeviceApi() : cudaDeviceApi();
}

void DeviceApi::streamWriteFlag(DeviceStream, uint32_t*, uint32_t) {
  throw Error(chorusInvalidUsage, std::string(name()) + " device API: streams cannot raise flags here");
}

void raiseStreamFlag(DeviceApi& api, uint32_t* flag, uint32_t value) {
  __atomic_store_n(flag, value, __ATOMIC_RELEASE);
  api.flagRaised(flag);
}

}  // namespace chorus
