// The failure modes of issue "When things go wrong", each staged for real (processes killed with SIGKILL, ranks
// that never arrive, aborts from another thread, mismatched calls, a launcher whose rank dies) and timed from the
// fault to the moment the last surviving rank has its error in hand.
#pragma once

#include <string>

namespace chorus::faults {

struct Trial {
  bool ok = false;       // every rank reported the expected error, naming what it should
  double seconds = 0;    // fault to error (for the timeout: call start to error, minus CHORUS_TIMEOUT)
  std::string detail;    // the first error message seen, or what went wrong
};

// Two processes, CHORUS_TIMEOUT=1, rank 1 never calls; rank 0's allreduce must return chorusTimeout naming rank
// 1. seconds: how far past the timeout the call returned.
Trial timeoutTrial();
// `nranks` processes run 4 MiB allreduces in a loop; the parent SIGKILLs the last rank mid-stream. seconds: from
// the kill to the last survivor's chorusRemoteError naming the lost rank. Fails if /dev/shm keeps a segment.
Trial deadPeerTrial(int nranks);
// Two ranks as threads; rank 0 blocks in an allreduce rank 1 never joins; another thread calls chorusCommAbort.
// seconds: from the abort to the blocked call's return.
Trial abortTrial();
// Two processes call allreduce with different counts. seconds: from the later call's start to the last rank's
// chorusInvalidUsage, whose message must list both counts.
Trial mismatchTrial();
// chorusrun -n 3 with this program as the ranks; rank 1 SIGKILLs itself after init. seconds: from its death to
// chorusrun's exit, which must be non-zero and name rank 1 and signal 9.
Trial launcherTrial(const std::string& chorusrun, const std::string& self);

// `nranks` processes run 1 MiB allreduces; the parent SIGKILLs rank nranks/2 mid-call. The survivors shrink
// (CHORUS_SHRINK_ABORT, no list), check 3 allreduces at the smaller size, then grow back with a restarted process
// and check one at the old size. seconds: from the kill to the last survivor's shrink returning.
Trial elasticTrial(int nranks);

// The rank side of launcherTrial (argv: --launcher-rank FILE): rank 1 writes its death time to FILE and dies.
int launcherRank(const std::string& timeFile);

}  // namespace chorus::faults
