// Where one rank runs (host, NUMA node, GPU) and what its host has; carried to every peer on its card.
#pragma once

#include <string>

#include "topology/host_topology.h"
#include "core/bootstrap/peer_card.h"

namespace chorus {

struct RankPlacement {
  int rank = -1;
  std::string hostId;     // ranks with equal ids share a host (hostIdentity(), CHORUS_HOST_ID)
  int numaNode = -1;      // NUMA node id it runs on; -1 unknown
  int cpu = -1;           // CPU it ran on when the placement was taken; -1 unknown
  bool bound = false;     // its CPU affinity lies inside numaNode (so the node will not change)
  int gpu = -1;           // index among its host's GPUs (PCI bus order); -1 none
  int hostNumaNodes = 1;  // NUMA nodes with CPUs on its host
  int hostGpus = 0;       // GPUs on its host
  int hostCores = 0;      // physical cores on its host; 0 unknown
  bool hostRdma = false;  // its host has an RDMA-capable NIC
  bool operator==(const RankPlacement&) const = default;
};

// The calling thread's placement on `host`: the NUMA node holding its whole CPU affinity when there is one
// (bound), else the node of the CPU it runs on now. gpu: CHORUS_LOCAL_RANK modulo the host's GPUs when both are
// known (local rank r drives GPU r, as with torchrun), else -1; a caller that knows the CUDA device sets it.
RankPlacement localPlacement(int rank, const std::string& hostId, const HostTopology& host);

// Writes p's fields into card.entries under "topo.*" keys (rank and host id travel in the card itself).
void addPlacement(PeerCard& card, const RankPlacement& p);
// addPlacement(card, localPlacement(card.rank, card.hostId, host)).
void addPlacement(PeerCard& card, const HostTopology& host);

// Reads a placement back from a card (from the network: every value is bounds-checked). Missing keys leave
// the defaults (a peer that says nothing about its placement); malformed ones throw chorusRemoteError naming
// the rank, the key and the value.
RankPlacement placementFromCard(const PeerCard& card);

}  // namespace chorus
