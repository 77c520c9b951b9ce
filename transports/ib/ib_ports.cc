#include "transports/ib/ib_ports.h"

#include <cerrno>
#include <cstring>
#include <fstream>

namespace chorus {

const char* portStateName(ibv_port_state s) {
  switch (s) {
    case IBV_PORT_DOWN: return "DOWN";
    case IBV_PORT_INIT: return "INIT";
    case IBV_PORT_ARMED: return "ARMED";
    case IBV_PORT_ACTIVE: return "ACTIVE";
    case IBV_PORT_ACTIVE_DEFER: return "ACTIVE_DEFER";
    default: return "NOP";
  }
}

namespace {

// ibv_port_attr's active_width and active_speed codes (the verbs man page's tables).
int widthLanes(uint8_t w) {
  switch (w) {
    case 1: return 1;
    case 2: return 4;
    case 4: return 8;
    case 8: return 12;
    case 16: return 2;
    default: return 0;
  }
}
double laneGbps(uint8_t s) {
  switch (s) {
    case 1: return 2.5;
    case 2: return 5;
    case 4: return 10;
    case 8: return 10;
    case 16: return 14;
    case 32: return 25;
    case 64: return 50;
    case 128: return 100;
    default: return 0;
  }
}

std::string rateText(uint8_t width, uint8_t speed) {
  const int lanes = widthLanes(width);
  const double gbps = laneGbps(speed);
  if (lanes == 0 || gbps == 0) return "unknown";
  char text[64];
  std::snprintf(text, sizeof(text), "%dx %g Gb/s = %g Gb/s", lanes, gbps, lanes * gbps);
  return text;
}

int numaNodeOf(const std::string& device, const HostTopology& host) {
  for (const PciDevice& d : host.pciDevices) {
    for (const std::string& r : d.rdmaDevices) {
      if (r == device) return d.numaNode;
    }
  }
  std::ifstream in("/sys/class/infiniband/" + device + "/device/numa_node");
  int node = -1;
  if (in >> node) return node;
  return -1;
}

}  // namespace

std::vector<IbPortReport> listIbPorts(const VerbsApi& api, const HostTopology& host, std::string* whyNone) {
  std::vector<IbPortReport> out;
  int n = 0;
  ibv_device** list = api.getDeviceList(&n);
  if (!list || n == 0) {
    *whyNone =
        std::string(api.origin) + " finds no RDMA device" + (list ? "" : std::string(": ") + std::strerror(errno));
    if (list) api.freeDeviceList(list);
    return out;
  }
  for (int d = 0; d < n; ++d) {
    const std::string name = api.getDeviceName(list[d]);
    ibv_context* ctx = api.openDevice(list[d]);
    if (!ctx) continue;
    ibv_device_attr attr{};
    if (api.queryDevice(ctx, &attr) == 0) {
      for (int port = 1; port <= attr.phys_port_cnt; ++port) {
        ibv_port_attr pa{};
        if (api.queryPort(ctx, static_cast<uint8_t>(port), &pa) != 0) continue;
        IbPortReport r;
        r.device = name;
        r.port = port;
        r.state = portStateName(pa.state);
        r.linkLayer = pa.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet (RoCE)" : "InfiniBand";
        r.rate = rateText(pa.active_width, pa.active_speed);
        r.mtu = 128 << static_cast<int>(pa.active_mtu);
        r.numaNode = numaNodeOf(name, host);
        int gpu = 0;
        for (const PciDevice& p : host.pciDevices) {
          if (p.kind != PciKind::kGpu) continue;
          if (r.numaNode >= 0 && p.numaNode == r.numaNode) r.gpusNear.push_back(gpu);
          ++gpu;
        }
        out.push_back(r);
      }
    }
    api.closeDevice(ctx);
  }
  api.freeDeviceList(list);
  if (out.empty()) *whyNone = "no device has a port that answers ibv_query_port";
  return out;
}

}  // namespace chorus
