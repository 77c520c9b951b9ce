// The emulated device runtime's entry point (device/device_emulation.h): how deviceApi() reaches this emulation of
// a GPU in host memory and threads under CHORUS_DEVICE_EMULATION=1, by name, from outside libchorus.so.
#include "device/device_emulation.h"
#include "emulation/device/emulated_device_api.h"

extern "C" chorus::DeviceApi* chorus_emulation_device_api() {
  // Never destroyed: streams may still wait on flags at exit, and joining their workers then would hang.
  static chorus::EmulatedDeviceApi* api = new chorus::EmulatedDeviceApi();
  return api;
}
