// One opened RDMA port for a communicator's ib transport: the verbs table it came from, the device context, a
// protection domain, and the port's addressing (LID for InfiniBand, GID index and GID for RoCE). Shared by every
// connection of the transport; closed when the last lets go.
#pragma once

#include <memory>
#include <string>

#include "device/device_api.h"
#include "transports/ib/registration_cache.h"
#include "transports/ib/verbs_api.h"

namespace chorus {

struct IbDeviceChoice {
  const VerbsApi* api;
  std::string hcaSpec;      // CHORUS_IB_HCA
  int gidIndex;             // CHORUS_IB_GID_INDEX (-1: chosen)
  std::string ifnameSpec;   // CHORUS_SOCKET_IFNAME: the interface whose RoCE v2 GID is chosen
  int socketFamily = 0;     // CHORUS_SOCKET_FAMILY: that interface's address family (AF_UNSPEC: either)
};

class IbDevice {
 public:
  // The first port that the filter allows and that is active; null with *whyNot ("no RDMA device", "mlx5_0 port 1
  // is DOWN", ...) where there is none.
  static std::shared_ptr<IbDevice> open(const IbDeviceChoice& choice, std::string* whyNot);
  ~IbDevice();
  IbDevice(const IbDevice&) = delete;
  IbDevice& operator=(const IbDevice&) = delete;

  const VerbsApi& api() const { return *api_; }
  ibv_context* context() const { return context_; }
  ibv_pd* pd() const { return pd_; }
  const std::string& name() const { return name_; }
  int port() const { return port_; }
  bool isEthernet() const { return ethernet_; }  // RoCE; else InfiniBand
  uint16_t lid() const { return lid_; }
  int gidIndex() const { return gidIndex_; }
  const ibv_gid& gid() const { return gid_; }
  ibv_mtu activeMtu() const { return activeMtu_; }
  const ibv_device_attr& attr() const { return attr_; }
  // The largest message (one RDMA write) the port takes: ibv_port_attr's max_msg_sz.
  uint64_t maxMessage() const { return maxMessage_; }
  // The caller's buffers registered for sending from them directly. Any large send's buffer where the adapter
  // pages on demand (a freed and remapped buffer then cannot leave a stale region behind); elsewhere only ranges
  // the caller registered (chorusCommRegister) until it deregisters them.
  RegistrationCache& userRegions() { return *userRegions_; }
  bool pagesOnDemand() const { return pagesOnDemand_; }
  // Device memory registered for the adapter to read directly (GPUDirect RDMA through ibv_reg_dmabuf_mr and the
  // device API's dma-buf export), cached by page range and checked against the allocation's identity. Whether the
  // system allows it is found once per device API, by registering a small allocation (directDeviceMemory()).
  RegistrationCache& deviceRegions() { return *deviceRegions_; }
  bool directDeviceMemory(DeviceApi& device);
  // The device API whose memory is registered directly (null: none yet, or the system does not allow it).
  DeviceApi* directDeviceApi() const { return directDevice_ == 1 ? deviceApi_ : nullptr; }
  // "chorus_soft0:1 RoCE v2 gid 3 (::ffff:10.0.0.2)", for messages.
  const std::string& describe() const { return description_; }

 private:
  IbDevice() = default;
  const VerbsApi* api_ = nullptr;
  ibv_context* context_ = nullptr;
  ibv_pd* pd_ = nullptr;
  std::string name_, description_;
  int port_ = 0;
  bool ethernet_ = false;
  uint16_t lid_ = 0;
  int gidIndex_ = 0;
  ibv_gid gid_{};
  ibv_mtu activeMtu_ = IBV_MTU_1024;
  ibv_device_attr attr_{};
  uint64_t maxMessage_ = uint64_t{1} << 30;
  std::unique_ptr<RegistrationCache> userRegions_;
  std::unique_ptr<RegistrationCache> deviceRegions_;
  int directDevice_ = -1;  // directDeviceMemory(): -1 not yet asked
  DeviceApi* deviceApi_ = nullptr;
  bool pagesOnDemand_ = false;
};

// A GID as text: "::ffff:10.0.0.2" for IPv4-mapped ones, 32 hex digits otherwise.
std::string gidText(const ibv_gid& gid);

}  // namespace chorus
