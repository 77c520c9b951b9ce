// chorusrun --bind-to core: each rank bound to one core of those chorusrun may run on, each emulated host's ranks to
// that host's share of them (as Open MPI's --bind-to core with --map-by node would place real hosts' ranks). Unbound,
// 4 ranks on 2 cores run in whichever placement the scheduler picks, and it moves them during a run: on the loopback
// 2x2 the placement alone decides which allreduce algorithm is fastest (perf/results/selection.md, "What the tuner's
// trials are made of").
#pragma once

#include <vector>

#include "launcher/launch_options.h"

namespace chorus::launcher {

// The cores (indices into `cpus`, the CPUs chorusrun may run on) of each of `ranks` ranks over `hosts` emulated
// hosts (1 = none): host h owns cpus.size() / hosts consecutive CPUs (at least one; hosts share CPUs round-robin
// when there are more hosts than CPUs), and its ranks take them in turn.
std::vector<int> bindingCpus(const std::vector<int>& cpus, int ranks, int hosts);
// The CPU of each rank under `policy`, or none (empty: the ranks stay free). kAuto binds as kCore only when that
// gives each of 2 or more ranks a CPU of its own: two ranks left free on two cores are sometimes placed together by
// the scheduler, and a 2-rank 64 MiB TCP allreduce then runs well below its usual pace (perf/results/tcp.md,
// "Binding ranks to cores"). With more ranks than cores, or one rank, binding buys nothing and would pin ranks that
// the scheduler could spread, so kAuto leaves them free (as Open MPI does when it oversubscribes).
std::vector<int> rankCpus(Binding policy, const std::vector<int>& cpus, int ranks, int hosts);
// The CPUs this process may run on (sched_getaffinity). Throws chorusSystemError when the call fails.
std::vector<int> allowedCpus();

}  // namespace chorus::launcher
