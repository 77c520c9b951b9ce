#include "launcher/core_binding.h"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <set>

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

std::vector<int> rankCpus(Binding policy, const std::vector<int>& cpus, int ranks, int hosts) {
  if (policy == Binding::kNone) return {};
  std::vector<int> each = bindingCpus(cpus, ranks, hosts);
  if (policy == Binding::kCore) return each;
  const bool ownCores = ranks >= 2 && std::set<int>(each.begin(), each.end()).size() == each.size();
  return ownCores ? each : std::vector<int>{};
}

std::vector<int> allowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) {
    throwSystemError("chorusrun: --bind-to", "sched_getaffinity", errno);
  }
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

}  // namespace chorus::launcher
