#include "topology/host_blocks.h"

#include <string>

#include "core/error.h"

namespace chorus {

namespace {

void checkSplit(int nranks, int nhosts) {
  if (nranks < 1 || nhosts < 1 || nhosts > nranks) {
    throwInvalidArgument("cannot split " + std::to_string(nranks) + " ranks over " + std::to_string(nhosts) +
                         " hosts: every host needs at least one rank");
  }
}

}  // namespace

HostBlock emulatedHostBlock(int host, int nranks, int nhosts) {
  checkSplit(nranks, nhosts);
  if (host < 0 || host >= nhosts) {
    throwInvalidArgument("host " + std::to_string(host) + " is not in 0.." + std::to_string(nhosts - 1));
  }
  const int base = nranks / nhosts;
  const int larger = nranks % nhosts;  // these first hosts get base + 1
  HostBlock b;
  b.ranks = base + (host < larger ? 1 : 0);
  b.firstRank = host * base + (host < larger ? host : larger);
  return b;
}

int emulatedHostOf(int rank, int nranks, int nhosts) {
  checkSplit(nranks, nhosts);
  if (rank < 0 || rank >= nranks) {
    throwInvalidArgument("rank " + std::to_string(rank) + " is not in 0.." + std::to_string(nranks - 1));
  }
  const int base = nranks / nhosts;
  const int larger = nranks % nhosts;
  const int inLarger = larger * (base + 1);
  return rank < inLarger ? rank / (base + 1) : larger + (rank - inLarger) / base;
}

int emulatedLocalRank(int rank, int nranks, int nhosts) {
  return rank - emulatedHostBlock(emulatedHostOf(rank, nranks, nhosts), nranks, nhosts).firstRank;
}

}  // namespace chorus
