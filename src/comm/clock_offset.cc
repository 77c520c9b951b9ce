#include "src/comm/clock_offset.h"

#include <algorithm>
#include <limits>

namespace chorus {

double measureClockOffsetUs(PeerIO& io, const std::vector<int>& measured, const std::function<double()>& nowUs,
                            const ClockOffsetOptions& options) {
  const int rank = io.rank();
  if (rank == 0) {
    for (int r : measured) {
      if (r == 0) continue;
      for (int i = 0; i < options.rounds; ++i) {
        double theirs = 0;
        io.wait(io.irecv(r, &theirs, sizeof theirs));
        const double mine = nowUs();
        io.wait(io.isend(r, &mine, sizeof mine));
      }
    }
    return 0;
  }
  if (std::find(measured.begin(), measured.end(), rank) == measured.end()) return 0;
  double best = std::numeric_limits<double>::infinity(), offset = 0;
  for (int i = 0; i < options.rounds; ++i) {
    const double sent = nowUs();
    io.wait(io.isend(0, &sent, sizeof sent));
    double theirs = 0;
    io.wait(io.irecv(0, &theirs, sizeof theirs));
    const double received = nowUs();
    if (received - sent < best) {
      best = received - sent;
      offset = theirs - (sent + received) / 2;
    }
  }
  return offset;
}

}  // namespace chorus
