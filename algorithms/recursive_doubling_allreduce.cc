#include "algorithms/algorithms.h"
#include "algorithms/halving_doubling_exchange.h"
#include "core/datatype.h"

namespace chorus {

// Rabenseifner's fix-up for a world that is not a power of two: the first 2*rem ranks pair up, evens hand their
// data to odds and sit out the doubling; odds hand the result back at the end.
void recursiveDoublingAllReduce(PeerIO& io, const CallArgs& op) {
  const int n = io.size(), r = io.rank();
  const size_t es = typeSize(op.type), bytes = op.count * es;
  copyIfOutOfPlace(io, op.send, op.recv, bytes);
  if (n == 1) return;
  char* data = static_cast<char*>(op.recv);
  char* tmp = io.workspace(bytes);
  Reducer& red = io.reducer();
  int p2 = 1;
  while (p2 * 2 <= n) p2 *= 2;
  const int rem = n - p2;
  int vrank;  // rank among the p2 ranks taking part in the doubling, -1 if sitting out
  if (r < 2 * rem) {
    if (r % 2 == 0) {
      io.wait(io.isend(r + 1, data, bytes));
      vrank = -1;
    } else {
      io.wait(io.irecv(r - 1, tmp, bytes));
      red.reduce(data, tmp, data, op.count, op.type, op.reduction);  // lower rank's data first, as everywhere below
      vrank = r / 2;
    }
  } else {
    vrank = r - rem;
  }
  if (vrank >= 0) {
    for (int mask = 1; mask < p2; mask <<= 1) {
      int pv = vrank ^ mask;
      int partner = pv < rem ? pv * 2 + 1 : pv + rem;
      rendezvousForStep(io, partner, bytes, bytes);
      io.exchange(partner, data, tmp, bytes);
      // Both partners compute lower op higher, so every rank ends with bit-identical floats.
      if (partner < r) {
        red.reduce(data, tmp, data, op.count, op.type, op.reduction);
      } else {
        red.reduce(data, data, tmp, op.count, op.type, op.reduction);
      }
    }
    if (op.reduction == chorusAvg) red.finishAverage(data, op.count, op.type, n);
  }
  if (r < 2 * rem) {
    if (r % 2 == 1) {
      io.wait(io.isend(r - 1, data, bytes));
    } else {
      io.wait(io.irecv(r + 1, data, bytes));
    }
  }
  io.waitAll();
}

}  // namespace chorus
