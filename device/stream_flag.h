// The host's side of DeviceApi::streamWaitFlag: raising the flag that streams wait on.
#pragma once

#include <cstdint>

#include "device/device_api.h"

namespace chorus {

// Stores `value` into `flag` (pinned memory) with release ordering, so that stream work waiting for it (and
// ordered after it) sees every write made before; then tells `api` (DeviceApi::flagRaised), so that the emulated
// device wakes its waiting stream workers at once instead of at their next poll.
void raiseStreamFlag(DeviceApi& api, uint32_t* flag, uint32_t value);

}  // namespace chorus
