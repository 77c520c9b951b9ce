// Every RDMA port the verbs list, with what a person choosing CHORUS_IB_HCA wants to know: state, link layer,
// rate, the NUMA node the adapter hangs off and the GPUs on that node (chorus-topo prints these).
#pragma once

#include <string>
#include <vector>

#include "topology/host_topology.h"
#include "transports/ib/verbs_api.h"

namespace chorus {

struct IbPortReport {
  std::string device;     // "mlx5_0"
  int port = 0;
  std::string state;      // "ACTIVE", "DOWN", ...
  std::string linkLayer;  // "InfiniBand" or "Ethernet (RoCE)"
  std::string rate;       // "4x 25 Gb/s = 100 Gb/s"
  int mtu = 0;            // active MTU in bytes
  int numaNode = -1;      // -1: unknown
  std::vector<int> gpusNear;  // GPU indexes (PCI order) on the same NUMA node
};

// "ACTIVE", "DOWN", ...: a port state as ibv_port_state names it.
const char* portStateName(ibv_port_state s);

// The ports of every device `api` lists; empty with *whyNone when it lists none.
std::vector<IbPortReport> listIbPorts(const VerbsApi& api, const HostTopology& host, std::string* whyNone);

}  // namespace chorus
