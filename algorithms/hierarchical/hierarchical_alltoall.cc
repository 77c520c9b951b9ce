// Alltoall in two levels, for several ranks per host on several hosts: each host's leader gathers its ranks' whole
// send buffers, the leaders exchange what each other host's ranks are owed (one message per pair of hosts instead of
// one per pair of ranks), and each leader hands its ranks their receive buffers. Pays off where a message across
// hosts costs far more than moving the bytes within one (the cost model decides).
//
// Layout (B bytes per block, n ranks, this host's ranks h0 < h1 < ... of L, host g's of Lg):
//   gathered   workspace():    L rows of n blocks: row a is local rank a's send buffer
//   received   workspace():    after it, per other host g in host order, Lg x L blocks: (source a' of g, local dest b)
//   packed     scratch(): per other host g, L x Lg blocks: (local source a, dest b' of g), sent to g's leader
//   handed out scratch(): later, per local rank b but the leader, n blocks in source rank order
#include <vector>

#include "algorithms/algorithms.h"
#include "algorithms/hierarchical/hierarchical.h"
#include "algorithms/hierarchical/hierarchy.h"
#include "core/datatype.h"

namespace chorus {

void hierarchicalAllToAll(PeerIO& io, const CallArgs& op) {
  const Hierarchy* hierarchy = io.hierarchy();
  const int n = io.size(), me = io.rank();
  const size_t B = op.count * typeSize(op.type);
  if (hierarchy == nullptr || n == 1 || B == 0) {
    pairwiseAllToAll(io, op);  // nothing to gain (and empty blocks still meet every peer)
    return;
  }
  const std::vector<std::vector<int>>& hosts = hierarchy->hosts;
  const int h = hierarchy->hostOf(me);
  const std::vector<int>& local = hosts[static_cast<size_t>(h)];
  const int leader = local.front();
  const size_t L = local.size(), row = static_cast<size_t>(n) * B;
  const char* send = static_cast<const char*>(op.send);
  char* recv = static_cast<char*>(op.recv);
  io.postingTogether();
  if (me != leader) {
    // 1. Everything this rank sends goes to its leader; 3. everything it receives comes from there.
    io.wait(io.isend(leader, send, row));
    io.wait(io.irecv(leader, recv, row));
    return;
  }
  // Where another host's blocks land in `received`, by host index (-1 for this host).
  std::vector<size_t> receivedAt(hosts.size(), 0);
  size_t otherBlocks = 0;
  for (size_t g = 0; g < hosts.size(); ++g) {
    if (static_cast<int>(g) == h) continue;
    receivedAt[g] = otherBlocks * B;
    otherBlocks += hosts[g].size() * L;
  }
  char* gathered = io.workspace(L * row + otherBlocks * B);
  char* received = gathered + L * row;
  // 1. Gather the local send buffers.
  for (size_t a = 1; a < L; ++a) io.irecv(local[a], gathered + a * row, row);
  io.copy(gathered, send, row);
  io.waitAll();
  // 2. Exchange with every other leader: this host's blocks for its ranks, its blocks for this host's.
  char* packed = io.scratch(std::max(otherBlocks * B, (L - 1) * row));
  for (size_t g = 0; g < hosts.size(); ++g) {
    if (static_cast<int>(g) == h) continue;
    io.irecv(hosts[g].front(), received + receivedAt[g], hosts[g].size() * L * B);
  }
  for (size_t g = 0; g < hosts.size(); ++g) {
    if (static_cast<int>(g) == h) continue;
    char* out = packed + receivedAt[g];  // the same sizes (Lg x L) as what comes back
    for (size_t a = 0; a < L; ++a) {
      for (size_t b = 0; b < hosts[g].size(); ++b) {
        io.copy(out + (a * hosts[g].size() + b) * B, gathered + a * row + static_cast<size_t>(hosts[g][b]) * B, B);
      }
    }
    io.isend(hosts[g].front(), out, L * hosts[g].size() * B);
  }
  io.waitAll();
  // 3. Each local rank's receive buffer: block s is what rank s sends it.
  char* handedOut = packed;  // the packs are sent: reuse the space
  for (size_t b = 0; b < L; ++b) {
    char* dst = b == 0 ? recv : handedOut + (b - 1) * row;
    for (size_t g = 0; g < hosts.size(); ++g) {
      for (size_t a = 0; a < hosts[g].size(); ++a) {
        const size_t source = static_cast<size_t>(hosts[g][a]);
        const char* block = static_cast<int>(g) == h
                                ? gathered + a * row + static_cast<size_t>(local[b]) * B
                                : received + receivedAt[g] + (a * L + b) * B;
        io.copy(dst + source * B, block, B);
      }
    }
    if (b > 0) io.isend(local[b], dst, row);
  }
  io.waitAll();
}

}  // namespace chorus
