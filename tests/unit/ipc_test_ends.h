// Two ranks in this process joined by CUDA IPC connections over their host connections (emulated devices): the
// ends the IPC connection and byte-ring tests drive.
#pragma once

#include <memory>

#include "tests/unit/device_test_support.h"
#include "transports/cuda_ipc/ipc_connection.h"

namespace chorus::test {

// Each sender writes into the other's ring (lent: its owner, the peer's connection, is destroyed after the
// borrower's). jobPrefix names the shared-memory host pair, so that suites running at once never meet.
struct IpcEnds : HostEnds {
  explicit IpcEnds(HostKind kind, const char* jobPrefix = "ipc-connection-test-") : HostEnds(kind, jobPrefix) {
    IpcRings ringsA, ringsB;
    const size_t bytes = kIpcSlots * kIpcSlotBytes;
    ringsA.local = DeviceRegion(apiA, apiA.deviceAlloc(bytes), bytes, DeviceRegion::Ownership::kAllocated);
    ringsB.local = DeviceRegion(apiB, apiB.deviceAlloc(bytes), bytes, DeviceRegion::Ownership::kAllocated);
    ringsA.remote = DeviceRegion(apiA, ringsB.local.data(), bytes, DeviceRegion::Ownership::kBorrowed);
    ringsB.remote = DeviceRegion(apiB, ringsA.local.data(), bytes, DeviceRegion::Ownership::kBorrowed);
    ringsA.localSlots = ringsA.remoteSlots = ringsB.localSlots = ringsB.remoteSlots = kIpcSlots;
    ringsA.localSlotBytes = ringsA.remoteSlotBytes = ringsB.localSlotBytes = ringsB.remoteSlotBytes = kIpcSlotBytes;
    a = std::make_unique<IpcConnection>(0, *hostA, apiA, std::move(ringsA));
    b = std::make_unique<IpcConnection>(1, *hostB, apiB, std::move(ringsB));
  }
  ~IpcEnds() {
    // Both drain their copies before either ring goes.
    b.reset();
    a.reset();
  }
  std::unique_ptr<IpcConnection> a, b;  // destroyed first (b before a: b borrows a's ring and a b's)
};

}  // namespace chorus::test
