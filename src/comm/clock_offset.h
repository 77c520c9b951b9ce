// How far each machine's clock is from rank 0's, so that traces of several machines share one timeline: Cristian's
// method, as NTP does it once. Ranks of one machine share its steady clock (CLOCK_MONOTONIC), so only ranks on
// other machines than rank 0's take part, and only those whose traces need it.
#pragma once

#include <functional>
#include <vector>

#include "algorithms/peer_io.h"

namespace chorus {

struct ClockOffsetOptions {
  int rounds = 8;  // round trips per rank; the one with the shortest round trip counts
};

// Collective over `io` for the ranks in `measured` (rank 0 and each of them call it; everyone else may too, and
// returns 0). Rank 0 answers each measured rank in turn; a measured rank sends its clock, gets rank 0's, and takes
// rank0 - (sent + received) / 2 from the shortest round trip. Returns the microseconds to add to this rank's
// `nowUs` to get rank 0's (0 on rank 0 and on ranks not measured); off by at most half that round trip.
double measureClockOffsetUs(PeerIO& io, const std::vector<int>& measured, const std::function<double()>& nowUs,
                            const ClockOffsetOptions& options = {});

}  // namespace chorus
