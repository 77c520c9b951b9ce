// Barrier by dissemination (Hensgen, Finkel and Manber 1988): at step k = 1, 2, 4, ... each rank signals rank r+k
// and waits for rank r-k. After ceil(log2 p) steps every rank has heard, directly or through others, from every
// rank, so none leaves before all have entered. Each signal is an empty message.
#include "algorithms/algorithms.h"

namespace chorus {

void disseminationBarrier(PeerIO& io, const CallArgs&) {
  const int p = io.size(), r = io.rank();
  for (int k = 1; k < p; k <<= 1) {
    Request q = io.irecv((r - k + p) % p, nullptr, 0);
    Request s = io.isend((r + k) % p, nullptr, 0);
    io.wait(q);
    io.wait(s);
  }
}

}  // namespace chorus
