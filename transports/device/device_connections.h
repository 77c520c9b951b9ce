// Connections that accept device pointers, one per peer, layered over the host connections to the same peers:
// CUDA IPC between processes of one machine (data through device staging rings, control over the host
// connection), and everywhere else staging through pinned host memory, pipelined so that copies overlap the
// transfer.
#pragma once

#include <memory>
#include <vector>

#include "core/deadline.h"
#include "device/device_api.h"
#include "transports/cuda_ipc/ipc_connection.h"
#include "transports/connection.h"

namespace chorus {

// Collective: every rank calls it at the same point of its call sequence, since setup messages travel over the
// host connections. hostConns[p] is the connection to rank p (null for self); sameMachine[p] says whether p runs
// on this physical machine (so that CUDA IPC can reach it). The result's entry p is null for self. The host
// connections must outlive the device connections and carry nothing else while a device connection is busy.
// `pieceBytes` is the largest piece of this rank's CUDA IPC rings (kIpcSlots of them per ring): the communicator
// passes its device slice, so that a slice crosses in one piece.
std::vector<std::unique_ptr<Connection>> makeDeviceConnections(int rank,
                                                               std::vector<std::unique_ptr<Connection>>& hostConns,
                                                               const std::vector<bool>& sameMachine, DeviceApi& api,
                                                               Deadline deadline, size_t pieceBytes = kIpcSlotBytes);

}  // namespace chorus
