// chorus-topo's account of TCP: the interfaces (rails) this host would stripe over, whether each is up, and for
// each peer of rank 0 in the world, the transport and the rails the pair would use (other hosts being like this one,
// their rails pair by name).
#pragma once

#include <ostream>

#include "topology/global_topology.h"

namespace chorus::topo {

void printTcpInterfaces(std::ostream& out, const GlobalTopology& world);

}  // namespace chorus::topo
