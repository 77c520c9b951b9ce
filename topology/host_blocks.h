// How N ranks are split over H emulated hosts (chorusrun --hosts, GlobalTopology::emulated): contiguous blocks,
// the first N % H hosts one rank larger (5 ranks on 2 hosts: 0-2 and 3-4).
#pragma once

namespace chorus {

struct HostBlock {
  int firstRank = 0;
  int ranks = 0;
};

// The ranks of host `host`. Throws chorusInvalidArgument unless 1 <= nhosts <= nranks and 0 <= host < nhosts.
HostBlock emulatedHostBlock(int host, int nranks, int nhosts);
// The host holding `rank`. Throws chorusInvalidArgument unless 1 <= nhosts <= nranks and 0 <= rank < nranks.
int emulatedHostOf(int rank, int nranks, int nhosts);
// `rank`'s index within its host's block (CHORUS_LOCAL_RANK). Throws as emulatedHostOf.
int emulatedLocalRank(int rank, int nranks, int nhosts);

}  // namespace chorus
