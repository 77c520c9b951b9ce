#include "algorithms/selection/world_costs.h"

#include <unistd.h>

#include <algorithm>

namespace chorus {
namespace {

LinkCost costOf(const LinkParams& p) {
  return LinkCost{p.latencyUs, p.bandwidthGBs, p.burstBytes, p.peakGBs, p.frameBytes, p.multiFrameUs, p.chainUs};
}

}  // namespace

CostInputs costInputsFor(const GlobalTopology& world, const LinkModel& links, bool sameHostOverNetwork,
                         size_t sliceBytes) {
  CostInputs in;
  in.nranks = world.nranks();
  in.nhosts = world.nhosts();
  in.maxRanksPerHost = world.maxRanksPerHost();
  int cores = 0;
  for (int r = 0; r < world.nranks(); ++r) {
    int c = world.placement(r).hostCores;
    if (c > 0) cores = cores == 0 ? c : std::min(cores, c);
  }
  in.coresPerHost = cores > 0 ? cores : static_cast<double>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  const LinkClass network = world.interHostLink();
  in.intraHost = costOf(links.params(sameHostOverNetwork ? LinkClass::kNetwork : world.intraHostLink()));
  in.intraHostMemory = !sameHostOverNetwork;
  in.interHost = costOf(links.params(network));
  in.sliceBytes = sliceBytes;
  if (links.contextSwitchUs() > 0) in.contextSwitchUs = links.contextSwitchUs();
  // Racks matter once the hosts fill more than one (the uplinks then carry what crosses between racks).
  if (links.fabric().hostsPerRack > 0 && in.nhosts > links.fabric().hostsPerRack) {
    in.hostsPerRack = links.fabric().hostsPerRack;
    in.rackUplinkGBs = links.fabric().uplinkGBs;
  }
  return in;
}

}  // namespace chorus
