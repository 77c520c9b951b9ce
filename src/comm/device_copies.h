// Where a CommIO's local copies go: memmove for host memory; for device calls an async copy on the call's stream,
// waited for, since the CPU cannot touch their buffers.
#pragma once

#include <cstddef>
#include <cstring>

#include "device/device_api.h"

namespace chorus {

struct DeviceCopies {
  DeviceApi* api = nullptr;  // null: host memory
  DeviceStream stream = nullptr;

  bool onHost() const { return api == nullptr; }
  void copy(void* dst, const void* src, size_t bytes) const {
    if (api == nullptr) {
      std::memmove(dst, src, bytes);
      return;
    }
    api->copyAsync(dst, src, bytes, stream);
    api->synchronize(stream);
  }
};

}  // namespace chorus
