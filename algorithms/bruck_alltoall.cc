// Alltoall in ceil(log2 p) steps (Bruck, Ho, Kipnis, Upfal and Weathersby 1997), for small blocks, where the number
// of messages costs more than moving each block log p times:
//   1. rotate: slot i holds the block this rank sends to rank r+i;
//   2. at step k = 1, 2, 4, ...: send every slot whose index has bit k set to rank r+k, and receive the same slots
//      from rank r-k (a block in slot i has then travelled the bits of i below k, from rank r-i+... toward r+i);
//   3. unrotate: slot i now holds the block from rank r-i.
// Slots live in the receive buffer; each step packs its slots into workspace(), receives into scratch(), and unpacks.
#include "algorithms/algorithms.h"
#include "core/datatype.h"

namespace chorus {

void bruckAllToAll(PeerIO& io, const CallArgs& op) {
  const int n = io.size(), r = io.rank();
  const size_t block = op.count * typeSize(op.type);
  const size_t total = block * static_cast<size_t>(n);
  const char* send = static_cast<const char*>(op.send);
  char* recv = static_cast<char*>(op.recv);
  if (n == 1 || block == 0) {
    pairwiseAllToAll(io, op);  // with empty blocks every rank still meets every peer, so counts are still compared
    return;
  }
  auto slot = [&](int i) { return recv + static_cast<size_t>(i) * block; };
  // 1. Rotate into the receive buffer: slot i = the block for rank r+i (two contiguous runs).
  const size_t head = static_cast<size_t>(n - r) * block;  // blocks r..n-1 go to slots 0..n-r-1
  io.copy(recv, send + static_cast<size_t>(r) * block, head);
  io.copy(recv + head, send, total - head);
  char* packed = io.workspace(total / 2 + block);
  char* landed = io.scratch(total / 2 + block);
  for (int k = 1; k < n; k <<= 1) {
    size_t bytes = 0;
    for (int i = 1; i < n; ++i) {
      if (i & k) {
        io.copy(packed + bytes, slot(i), block);
        bytes += block;
      }
    }
    const int to = (r + k) % n, from = (r - k + n) % n;
    Request q = io.irecv(from, landed, bytes);
    Request s = io.isend(to, packed, bytes);
    io.wait(q);
    io.wait(s);
    bytes = 0;
    for (int i = 1; i < n; ++i) {
      if (i & k) {
        io.copy(slot(i), landed + bytes, block);
        bytes += block;
      }
    }
  }
  // 3. Slot i holds the block from rank r-i; it belongs at block r-i. Reverse slots 1..n-1 in place, then rotate:
  // done through workspace(), which is large enough for the whole buffer here.
  char* whole = io.workspace(total);
  io.copy(whole, recv, total);
  for (int i = 0; i < n; ++i) io.copy(recv + static_cast<size_t>((r - i + n) % n) * block, whole + i * block, block);
}

}  // namespace chorus
