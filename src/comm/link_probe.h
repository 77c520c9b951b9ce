// Measures the link classes of a running communicator (CHORUS_TOPO_PROBE=1) instead of trusting the defaults.
#pragma once

#include <cstddef>

#include "algorithms/peer_io.h"
#include "topology/global_topology.h"
#include "topology/link_model.h"

namespace chorus {

struct LinkProbeOptions {
  size_t smallBytes = 8;        // latency message
  size_t midBytes = 1 << 20;    // bandwidth: the slope between these two sizes, so that a shaper's burst (tc tbf
  size_t largeBytes = 4 << 20;  // lets its first bytes through at once) and the latency cancel out
  int smallRounds = 20;         // timed round trips (after 3 untimed)
  int largeRounds = 4;          // timed round trips of each bandwidth size (after 1 untimed)
};

// Collective: every rank of `io` calls it with the same `world`, after connections are up and inside one begun
// operation of io. For each host-memory link class present, the class's representative pair times ping-pongs
// of a small and a large message (one class at a time; the other ranks wait); rank 0 gathers the figures and
// sends the whole model down a binomial tree. Returns, identically on every rank, rank 0's `start` with each
// measured class replaced (source kProbe). A few milliseconds per class on TCP. Throws what io throws.
LinkModel probeLinkModel(PeerIO& io, const GlobalTopology& world, const LinkModel& start,
                         const LinkProbeOptions& options = {});

}  // namespace chorus
