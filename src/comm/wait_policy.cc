#include "src/comm/wait_policy.h"

#include <unistd.h>

namespace chorus {

WaitPolicy WaitPolicy::forRanksOnMachine(int localRanks) {
  // Yields before sleeping with a core per rank: about a millisecond when nothing else wants the core. Sleeping
  // costs a doorbell and a wakeup (tens of us here): with 200 a 1 MiB ping-pong slept on every message (122 us
  // against 48 with 2000).
  constexpr int kYields = 2000;
  constexpr int kOversubscribedYields = 64;
  // Oversubscribed hosts (more ranks than cores) must not spin: the peer they wait for needs the core. Yielding (as
  // Open MPI's yield_when_idle does) lets the peer run at once; sleeping in poll would add a doorbell and a wakeup
  // to every step.
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  const bool oversubscribed = localRanks > cores;
  return oversubscribed ? WaitPolicy{2, kOversubscribedYields} : WaitPolicy{200, kYields};
}

}  // namespace chorus
