// chorusrun --bind-to core: each rank bound to one core of those chorusrun may run on, each emulated host's ranks to
// that host's share of them (as Open MPI's --bind-to core with --map-by node would place real hosts' ranks). Unbound,
// 4 ranks on 2 cores run in whichever placement the scheduler picks, and it moves them during a run: on the loopback
// 2x2 the placement alone decided which allreduce algorithm was fastest (perf/RESULTS.md, session 19).
#pragma once

#include <vector>

namespace chorus::launcher {

// The cores (indices into `cpus`, the CPUs chorusrun may run on) of each of `ranks` ranks over `hosts` emulated
// hosts (1 = none): host h owns cpus.size() / hosts consecutive CPUs (at least one; hosts share CPUs round-robin
// when there are more hosts than CPUs), and its ranks take them in turn.
std::vector<int> bindingCpus(const std::vector<int>& cpus, int ranks, int hosts);
// The CPUs this process may run on (sched_getaffinity). Throws chorusSystemError when the call fails.
std::vector<int> allowedCpus();

}  // namespace chorus::launcher
