// Setup of the device connections: every pair exchanges offers over its host connection (a CUDA IPC ring where
// the peer shares this machine and a device is usable), then, where both offered, whether each could map the
// other's ring. Only when both sides mapped does the pair use CUDA IPC; anything less falls back to staging
// through pinned memory on both sides, so the two ends always agree on what travels over the host connection.
#include "transports/device/device_connections.h"

#include <string>

#include "core/error.h"
#include "core/logging.h"
#include "transports/complete_transfers.h"
#include "transports/cuda_ipc/ipc_connection.h"
#include "transports/device/process_token.h"
#include "transports/device/staged_connection.h"
#include "transports/reserved_tags.h"

namespace chorus {
namespace {

constexpr uint32_t kDeviceSetupTag = reserved_tags::kDeviceSetup;
constexpr uint32_t kOfferMagic = 0x56444843;  // "CHDV"
constexpr uint32_t kOfferVersion = 2;

// What each side tells each peer first.
struct DeviceOffer {
  uint32_t magic;
  uint32_t version;
  uint32_t ipc;  // 1: a ring is offered, described by the fields below
  uint32_t slots;
  uint64_t slotBytes;
  uint64_t process;  // processToken() of the sender
  DeviceIpcHandle handle;
};
static_assert(sizeof(DeviceOffer) == 96);

std::string who(int rank, int peer) { return errorContext(rank, peer, "device connection setup"); }

// Sends out[p] to and receives in[p] from each of `peers` over its host connection, all at once (so no order of
// pairs can deadlock). Throws naming the peers not heard from when the deadline passes, or the peer whose
// connection failed.
template <typename T>
void exchange(int rank, std::vector<std::unique_ptr<Connection>>& hostConns, const std::vector<int>& peers,
              std::vector<T>& out, std::vector<T>& in, Deadline deadline, const char* what) {
  std::vector<PostedTransfer> posted;
  for (int p : peers) {
    Connection& c = *hostConns[p];
    posted.push_back({&c, c.isend(&out[p], sizeof(T), kDeviceSetupTag), c.irecv(&in[p], sizeof(T), kDeviceSetupTag)});
  }
  auto timedOut = [&](const std::string& waiting) {
    return errorContext(rank, "device connection setup (" + std::string(what) + ")") +
           ": timed out (CHORUS_TIMEOUT) waiting on rank(s) " + waiting;
  };
  auto failed = [&](const Error& e, int peer) {
    return e.withMessage(who(rank, peer) + " failed (" + what + "): " + e.what());
  };
  completeTransfers(posted, deadline, {errorContext(rank, "device connection setup"), timedOut, failed});
}

// The offer to peer p; allocates and exports p's ring into `ring` when IPC may work.
DeviceOffer makeOffer(int rank, int peer, bool tryIpc, size_t pieceBytes, DeviceApi& api, DeviceRegion& ring) {
  DeviceOffer offer{kOfferMagic, kOfferVersion, 0, static_cast<uint32_t>(kIpcSlots), pieceBytes, processToken(), {}};
  if (!tryIpc) return offer;
  const char* call = "deviceAlloc";
  try {
    const size_t bytes = kIpcSlots * pieceBytes;
    ring = DeviceRegion(api, api.deviceAlloc(bytes), bytes, DeviceRegion::Ownership::kAllocated);
    call = "ipcExport";
    api.ipcExport(ring.data(), &offer.handle);
    offer.ipc = 1;
  } catch (const Error& e) {
    CHORUS_WARN(rank, who(rank, peer) << ": no CUDA IPC ring (" << call << " failed: " << e.what()
                                      << "); staging through pinned host memory instead");
    ring.reset();
  }
  return offer;
}

void checkOffer(int rank, int peer, const DeviceOffer& o) {
  if (o.magic != kOfferMagic || o.version != kOfferVersion) {
    throw Error(chorusInvalidUsage, who(rank, peer) + ": its offer is not one this build understands (magic " +
                                        std::to_string(o.magic) + ", version " + std::to_string(o.version) +
                                        "): do the ranks run the same Chorus?");
  }
  if (o.ipc && (o.slots == 0 || o.slots > 1024 || o.slotBytes == 0 || o.slotBytes > (size_t{1} << 30))) {
    throw Error(chorusInvalidUsage, who(rank, peer) + ": its CUDA IPC ring has an impossible shape (" +
                                        std::to_string(o.slots) + " slots of " + std::to_string(o.slotBytes) +
                                        " bytes)");
  }
}

}  // namespace

std::vector<std::unique_ptr<Connection>> makeDeviceConnections(int rank,
                                                               std::vector<std::unique_ptr<Connection>>& hostConns,
                                                               const std::vector<bool>& sameMachine, DeviceApi& api,
                                                               Deadline deadline, size_t pieceBytes) {
  const size_t n = hostConns.size();
  if (sameMachine.size() != n) {
    throwInternal(errorContext(rank, "makeDeviceConnections") + ": got " + std::to_string(n) +
                  " host connections but " + std::to_string(sameMachine.size()) + " machine flags");
  }
  const bool deviceUsable = api.available();
  std::vector<int> peers;
  std::vector<DeviceOffer> mine(n), theirs(n);
  std::vector<DeviceRegion> local(n), remote(n);
  for (size_t p = 0; p < n; ++p) {
    if (!hostConns[p]) continue;
    peers.push_back(static_cast<int>(p));
    mine[p] = makeOffer(rank, static_cast<int>(p), deviceUsable && sameMachine[p], pieceBytes, api, local[p]);
  }
  exchange(rank, hostConns, peers, mine, theirs, deadline, "offers");

  // Where both offered a ring: map the peer's, then tell each other whether that worked.
  std::vector<int> ipcPeers;
  std::vector<uint32_t> mapped(n, 0), peerMapped(n, 0);
  for (int p : peers) {
    checkOffer(rank, p, theirs[p]);
    if (!mine[p].ipc || !theirs[p].ipc || theirs[p].process == mine[p].process) continue;
    ipcPeers.push_back(p);
    try {
      const size_t bytes = size_t{theirs[p].slots} * theirs[p].slotBytes;
      remote[p] = DeviceRegion(api, api.ipcOpen(theirs[p].handle), bytes, DeviceRegion::Ownership::kMapped);
      mapped[p] = 1;
    } catch (const Error& e) {
      CHORUS_WARN(rank, who(rank, p) << ": ipcOpen of its ring failed (" << e.what()
                                     << "); staging through pinned host memory instead");
    }
  }
  exchange(rank, hostConns, ipcPeers, mapped, peerMapped, deadline, "CUDA IPC mappings");

  std::vector<std::unique_ptr<Connection>> out(n);
  for (int p : peers) {
    Connection& host = *hostConns[p];
    if (mapped[p] && peerMapped[p]) {
      IpcRings rings;
      rings.local = std::move(local[p]);
      rings.localSlots = mine[p].slots;
      rings.localSlotBytes = mine[p].slotBytes;
      rings.remote = std::move(remote[p]);
      rings.remoteSlots = theirs[p].slots;
      rings.remoteSlotBytes = theirs[p].slotBytes;
      out[p] = std::make_unique<IpcConnection>(rank, host, api, std::move(rings));
    } else {
      out[p] = std::make_unique<StagedConnection>(rank, host, api);
    }
    CHORUS_INFO(rank, "device connection to rank " << p << ": " << out[p]->describe());
  }
  return out;
}

}  // namespace chorus
