// The entry point of the emulated device runtime (emulation/device/device_entry.cc), which deviceApi() looks up by
// name under CHORUS_DEVICE_EMULATION=1 (core/emulation_library.h): the emulation is not part of libchorus.so.
// Declared here so that its definition is checked against the type deviceApi() calls it with.
#pragma once

#include "device/device_api.h"

// The process's emulated device: made on first use, never destroyed (streams may still wait on flags at exit, and
// joining their workers then would hang).
extern "C" [[gnu::visibility("default")]] chorus::DeviceApi* chorus_emulation_device_api();
