#include "launcher/core_binding.h"

#include <sched.h>

#include <algorithm>
#include <cerrno>

#include "core/error.h"
#include "topology/host_blocks.h"

namespace chorus::launcher {

std::vector<int> bindingCpus(const std::vector<int>& cpus, int ranks, int hosts) {
  std::vector<int> out;
  if (cpus.empty()) return out;
  const int n = static_cast<int>(cpus.size());
  const int perHost = std::max(1, n / hosts);
  for (int r = 0; r < ranks; ++r) {
    const int host = emulatedHostOf(r, ranks, hosts);
    const int local = emulatedLocalRank(r, ranks, hosts);
    out.push_back(cpus[static_cast<size_t>((host * perHost + local % perHost) % n)]);
  }
  return out;
}

std::vector<int> allowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) {
    throwSystemError("chorusrun: --bind-to core", "sched_getaffinity", errno);
  }
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

}  // namespace chorus::launcher
