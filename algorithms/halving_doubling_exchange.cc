#include "algorithms/halving_doubling_exchange.h"

#include <algorithm>
#include <vector>

#include "algorithms/patterns/ring_pattern.h"
#include "core/datatype.h"

namespace chorus {

void rendezvousForStep(PeerIO& io, int peer, size_t sendBytes, size_t recvBytes) {
  if (io.size() <= 2 || sendBytes == 0 || recvBytes == 0 || std::max(sendBytes, recvBytes) < kRendezvousBytes) return;
  char entered = 1, partnerEntered = 0;
  io.exchange(peer, &entered, &partnerEntered, 1);
}

void exchangeWithPeer(PeerIO& io, int peer, const void* sendData, size_t sendBytes, void* recvData, size_t recvBytes) {
  rendezvousForStep(io, peer, sendBytes, recvBytes);
  if (recvBytes > 0) io.irecv(peer, recvData, recvBytes);
  if (sendBytes > 0) io.isend(peer, sendData, sendBytes);
  io.waitAll();
}

void exchangeAndReduce(PeerIO& io, int peer, const char* give, size_t giveElems, char* landing, const char* mine,
                       char* out, size_t keepElems, chorusDataType_t type, chorusRedOp_t op) {
  const size_t es = typeSize(type);
  rendezvousForStep(io, peer, giveElems * es, keepElems * es);
  const size_t sliceElems = io.sliceBytes() / es;
  // Slicing lets the reduction of one slice overlap the arrival of the next; both sides cut a range alike.
  const size_t keepSlices = keepElems == 0 ? 0 : slicesFor(keepElems, 1, sliceElems);
  std::vector<Request> arrivals(keepSlices);
  for (size_t s = 0; s < keepSlices; ++s) {
    Range r = splitEven(keepElems, keepSlices, s);
    arrivals[s] = io.irecv(peer, landing + r.begin * es, r.len * es);
  }
  const size_t giveSlices = giveElems == 0 ? 0 : slicesFor(giveElems, 1, sliceElems);
  for (size_t s = 0; s < giveSlices; ++s) {
    Range r = splitEven(giveElems, giveSlices, s);
    io.isend(peer, give + r.begin * es, r.len * es);
  }
  for (size_t s = 0; s < keepSlices; ++s) {
    Range r = splitEven(keepElems, keepSlices, s);
    const size_t at = r.begin * es;
    io.waitAndReduce(arrivals[s], landing + at, out + at, mine + at, r.len, type, op);
  }
  io.waitAll();
}

}  // namespace chorus
