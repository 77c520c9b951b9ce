// What a communicator needs to run collectives on device buffers, made by its progress thread at the first device
// call: an internal stream for copies and reductions, staging memory on the device, connections that accept
// device pointers (layered over the host connections), and the CommIO that drives them.
#pragma once

#include <memory>
#include <vector>

#include "src/comm/comm_io.h"
#include "src/comm/staging_memory.h"
#include "device/device_api.h"
#include "transports/connection.h"

namespace chorus {

struct DeviceResources {
  // Frees the staging memory and the stream; the connections must have been closed (or abandoned) before.
  ~DeviceResources();

  DeviceApi* api = nullptr;
  int device = -1;
  DeviceStream stream = nullptr;
  std::unique_ptr<StagingMemory> staging;
  // Device staging regions replaced by larger ones, freed only here: cudaFree waits for the whole device, and a
  // caller's stream sits in a wait on a flag that the progress thread raises after the call, so a free inside a
  // call would never return (seen on an H100 when a reduce of 80 KB outgrew the 64 KiB workspace).
  std::vector<char*> retiredStaging;
  std::vector<std::unique_ptr<Connection>> conns;  // [p]: to rank p, null for self
  std::unique_ptr<CommIO> io;
};

}  // namespace chorus
