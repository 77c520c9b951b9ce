// Placeholder until the staging and CUDA IPC connections land: forwards to the host connection, which is only
// correct for memory the host can address (the emulation's). Replaced by the real layering.
#include "transports/device/device_connections.h"

#include "src/core/error.h"

namespace chorus {
namespace {

class ForwardingConnection final : public Connection {
 public:
  explicit ForwardingConnection(Connection& inner) : inner_(inner) {}
  uint64_t isend(const void* buf, size_t bytes, uint32_t tag) override { return inner_.isend(buf, bytes, tag); }
  uint64_t irecv(void* buf, size_t bytes, uint32_t tag) override { return inner_.irecv(buf, bytes, tag); }
  bool progress() override { return inner_.progress(); }
  uint64_t sendsDone() const override { return inner_.sendsDone(); }
  uint64_t recvsDone() const override { return inner_.recvsDone(); }
  bool busy() const override { return inner_.busy(); }
  bool largeReceivePending() const override { return inner_.largeReceivePending(); }
  void addPollFds(std::vector<pollfd>& fds) const override { inner_.addPollFds(fds); }
  void closeGracefully() override {}
  void abandon() override { inner_.abandon(); }
  void addHangupFds(std::vector<pollfd>& fds) const override { inner_.addHangupFds(fds); }
  void checkAlive() override { inner_.checkAlive(); }
  int peer() const override { return inner_.peer(); }
  const char* describe() const override { return inner_.describe(); }

 private:
  Connection& inner_;
};

}  // namespace

std::vector<std::unique_ptr<Connection>> makeDeviceConnections(int, std::vector<std::unique_ptr<Connection>>& hostConns,
                                                               const std::vector<bool>&, DeviceApi&, Deadline) {
  std::vector<std::unique_ptr<Connection>> out(hostConns.size());
  for (size_t p = 0; p < hostConns.size(); ++p) {
    if (hostConns[p]) out[p] = std::make_unique<ForwardingConnection>(*hostConns[p]);
  }
  return out;
}

}  // namespace chorus
