#include "transports/ib/ib_device.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "core/logging.h"
#include "topology/network_interfaces.h"
#include "transports/ib/hca_filter.h"
#include "transports/ib/ib_ports.h"

namespace chorus {
namespace {

bool isIpv4Mapped(const ibv_gid& g) {
  static const uint8_t kPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::memcmp(g.raw, kPrefix, 12) == 0;
}

// The RoCE GID to use: the v2 one of the interface CHORUS_SOCKET_IFNAME picks (by address, else by the GID's
// network device), else the first v2 IPv4 one, else the first. -1 where the table is empty.
int chooseRoceGid(const VerbsApi& api, ibv_context* ctx, int port, int tableLength, const IbDeviceChoice& choice,
                  std::string* why) {
  std::string address, ifname;
  try {
    NetworkInterface nic = chooseNetworkInterface(choice.ifnameSpec, choice.socketFamily);
    address = nic.address;
    ifname = nic.name;
  } catch (const std::exception& e) {
    *why = e.what();
  }
  in_addr want{};
  const bool haveV4 = inet_pton(AF_INET, address.c_str(), &want) == 1;
  // A RoCE v2 GID of an IPv6 address is that address (a link-local one without its zone).
  in6_addr want6{};
  const bool haveV6 = inet_pton(AF_INET6, address.substr(0, address.find('%')).c_str(), &want6) == 1;
  const unsigned ifindex = ifname.empty() ? 0 : if_nametoindex(ifname.c_str());
  int byAddress = -1, byDevice = -1, firstV2 = -1, first = -1;
  for (int i = 0; i < tableLength; ++i) {
    ibv_gid_entry e{};
    bool v2 = true;
    if (api.queryGidEx) {
      if (api.queryGidEx(ctx, static_cast<uint32_t>(port), static_cast<uint32_t>(i), &e, 0) != 0) continue;
      v2 = e.gid_type == IBV_GID_TYPE_ROCE_V2;
    } else if (api.queryGid(ctx, static_cast<uint8_t>(port), i, &e.gid) != 0) {
      continue;
    }
    static const ibv_gid kZero{};
    if (std::memcmp(e.gid.raw, kZero.raw, 16) == 0) continue;
    if (first < 0) first = i;
    if (!v2) continue;
    if (firstV2 < 0 && isIpv4Mapped(e.gid)) firstV2 = i;
    if (byAddress < 0 && haveV4 && isIpv4Mapped(e.gid) && std::memcmp(&e.gid.raw[12], &want, 4) == 0) byAddress = i;
    if (byAddress < 0 && haveV6 && std::memcmp(e.gid.raw, &want6, 16) == 0) byAddress = i;
    if (byDevice < 0 && ifindex != 0 && e.ndev_ifindex == ifindex) byDevice = i;
  }
  for (int c : {byAddress, byDevice, firstV2, first}) {
    if (c >= 0) return c;
  }
  return -1;
}

}  // namespace

std::string gidText(const ibv_gid& gid) {
  if (isIpv4Mapped(gid)) {
    char text[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &gid.raw[12], text, sizeof(text));
    return std::string("::ffff:") + text;
  }
  static const char* kHex = "0123456789abcdef";
  std::string s;
  for (uint8_t b : gid.raw) {
    s += kHex[b >> 4];
    s += kHex[b & 15];
  }
  return s;
}

std::shared_ptr<IbDevice> IbDevice::open(const IbDeviceChoice& choice, std::string* whyNot) {
  const VerbsApi& api = *choice.api;
  HcaFilter filter(choice.hcaSpec);
  int n = 0;
  ibv_device** list = api.getDeviceList(&n);
  if (!list || n == 0) {
    *whyNot =
        std::string(api.origin) + " finds no RDMA device" + (list ? "" : std::string(": ") + std::strerror(errno));
    if (list) api.freeDeviceList(list);
    return nullptr;
  }
  std::string seen;  // why each device or port was passed over
  auto passOver = [&seen](const std::string& why) { seen += (seen.empty() ? "" : "; ") + why; };
  std::shared_ptr<IbDevice> chosen;
  for (int d = 0; d < n && !chosen; ++d) {
    const std::string name = api.getDeviceName(list[d]);
    ibv_context* ctx = api.openDevice(list[d]);
    if (!ctx) {
      passOver(name + ": ibv_open_device failed: " + std::strerror(errno));
      continue;
    }
    ibv_device_attr attr{};
    if (api.queryDevice(ctx, &attr) != 0) {
      passOver(name + ": ibv_query_device failed: " + std::strerror(errno));
      api.closeDevice(ctx);
      continue;
    }
    for (int port = 1; port <= attr.phys_port_cnt && !chosen; ++port) {
      if (!filter.allows(name, port)) {
        passOver(name + ":" + std::to_string(port) + " excluded by CHORUS_IB_HCA");
        continue;
      }
      ibv_port_attr pa{};
      if (api.queryPort(ctx, static_cast<uint8_t>(port), &pa) != 0) {
        passOver(name + ":" + std::to_string(port) + " ibv_query_port failed");
        continue;
      }
      if (pa.state != IBV_PORT_ACTIVE) {
        passOver(name + ":" + std::to_string(port) + " is " + portStateName(pa.state));
        continue;
      }
      auto dev = std::shared_ptr<IbDevice>(new IbDevice());
      dev->api_ = &api;
      dev->context_ = ctx;
      dev->name_ = name;
      dev->port_ = port;
      dev->attr_ = attr;
      if (pa.max_msg_sz > 0) dev->maxMessage_ = pa.max_msg_sz;
      dev->activeMtu_ = pa.active_mtu;
      dev->ethernet_ = pa.link_layer == IBV_LINK_LAYER_ETHERNET;
      dev->lid_ = pa.lid;
      if (dev->ethernet_) {
        std::string why;
        dev->gidIndex_ =
            choice.gidIndex >= 0 ? choice.gidIndex : chooseRoceGid(api, ctx, port, pa.gid_tbl_len, choice, &why);
        if (dev->gidIndex_ < 0 || dev->gidIndex_ >= pa.gid_tbl_len) {
          passOver(name + ":" + std::to_string(port) + " has no usable GID" +
                   (choice.gidIndex >= 0 ? " at CHORUS_IB_GID_INDEX=" + std::to_string(choice.gidIndex) : "") +
                   (why.empty() ? "" : " (" + why + ")"));
          dev->context_ = nullptr;  // still the loop's to close
          continue;
        }
      } else {
        dev->gidIndex_ = choice.gidIndex >= 0 ? choice.gidIndex : 0;
      }
      if (api.queryGid(ctx, static_cast<uint8_t>(port), dev->gidIndex_, &dev->gid_) != 0) {
        passOver(name + ":" + std::to_string(port) + " ibv_query_gid failed");
        dev->context_ = nullptr;
        continue;
      }
      dev->pd_ = api.allocPd(ctx);
      if (!dev->pd_) {
        passOver(name + ": ibv_alloc_pd failed: " + std::strerror(errno));
        dev->context_ = nullptr;
        continue;
      }
      ibv_device_attr_ex ex{};
      const uint32_t needed = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_WRITE;
      dev->pagesOnDemand_ = api.queryDeviceEx(ctx, &ex) == 0 && (ex.odp_caps.general_caps & IBV_ODP_SUPPORT) &&
                            (ex.odp_caps.per_transport_caps.rc_odp_caps & needed) == needed;
      IbDevice* raw = dev.get();
      const int access = IBV_ACCESS_LOCAL_WRITE | (dev->pagesOnDemand_ ? IBV_ACCESS_ON_DEMAND : 0);
      dev->userRegions_ = std::make_unique<RegistrationCache>(
          [raw, access](void* p, size_t n) { return raw->api_->regMr(raw->pd_, p, n, access); },
          [raw](ibv_mr* mr) { raw->api_->deregMr(mr); }, RegistrationCache::Limits{});
      dev->deviceRegions_ = std::make_unique<RegistrationCache>(
          [raw](void* p, size_t n) -> ibv_mr* {
            int fd = -1;
            uint64_t offset = 0;
            if (!raw->api_->regDmabufMr || !raw->deviceApi_ || !raw->deviceApi_->exportDmabuf(p, n, &fd, &offset)) {
              errno = ENOTSUP;
              return nullptr;
            }
            ibv_mr* mr = raw->api_->regDmabufMr(raw->pd_, offset, n, reinterpret_cast<uint64_t>(p), fd,
                                                IBV_ACCESS_LOCAL_WRITE);
            const int err = errno;
            ::close(fd);  // the region holds the dma-buf itself
            errno = err;
            return mr;
          },
          [raw](ibv_mr* mr) { raw->api_->deregMr(mr); }, RegistrationCache::Limits{},
          [raw](const void* p) { return raw->deviceApi_ ? raw->deviceApi_->allocationId(p) : 0; });
      dev->description_ =
          name + ":" + std::to_string(port) +
          (dev->ethernet_ ? " RoCE gid " + std::to_string(dev->gidIndex_) + " (" + gidText(dev->gid_) + ")"
                          : " IB lid " + std::to_string(dev->lid_));
      chosen = dev;
    }
    if (!chosen) api.closeDevice(ctx);
  }
  api.freeDeviceList(list);
  if (!chosen) *whyNot = "no active RDMA port: " + seen;
  return chosen;
}

bool IbDevice::directDeviceMemory(DeviceApi& device) {
  if (directDevice_ >= 0 && deviceApi_ == &device) return directDevice_ == 1;
  if (directDevice_ >= 0) return false;  // decided for another device API: that one keeps the regions
  directDevice_ = 0;
  deviceApi_ = &device;
  if (!api_->regDmabufMr || !device.available()) return false;
  void* probe = nullptr;
  try {
    probe = device.deviceAlloc(4096);
    RegistrationCache::Handle h = deviceRegions_->acquire(probe, 4096);
    directDevice_ = h.mr ? 1 : 0;
    deviceRegions_->release(h);
    deviceRegions_->invalidate(probe, 4096);
    device.deviceFree(probe);
  } catch (...) {
    try {
      if (probe) device.deviceFree(probe);
    } catch (...) {
    }
    directDevice_ = 0;
  }
  CHORUS_INFO(-1, "ib " << description_ << ": device buffers "
                        << (directDevice_ ? "registered directly (dma-buf)" : "staged through host memory"));
  return directDevice_ == 1;
}

IbDevice::~IbDevice() {
  deviceRegions_.reset();
  userRegions_.reset();  // its regions belong to the protection domain
  if (pd_) api_->deallocPd(pd_);
  if (context_) api_->closeDevice(context_);
}

}  // namespace chorus
