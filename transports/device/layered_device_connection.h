// What the two device connections (staged through pinned memory, CUDA IPC) share: they layer over the host
// connection to the same peer, which keeps ordering, liveness, goodbyes and authentication, and they own device
// copies in flight that no descriptor announces.
#pragma once

#include <string>
#include <vector>

#include "core/error.h"
#include "device/device_api.h"
#include "transports/connection.h"

namespace chorus {

class LayeredDeviceConnection : public Connection, public DescriptorlessProgress {
 public:
  // host must outlive this connection and carry nothing else while it is busy.
  LayeredDeviceConnection(int rank, Connection& host, DeviceApi& api, std::string description);
  ~LayeredDeviceConnection() override = default;
  LayeredDeviceConnection(const LayeredDeviceConnection&) = delete;
  LayeredDeviceConnection& operator=(const LayeredDeviceConnection&) = delete;

  // True while a device copy is in flight: its completion moves things on, yet no descriptor announces it.
  bool movesWithoutDescriptor() const override { return copiesInFlight_ > 0; }

  // Sleeping until much of a large receive has arrived pays only when no device copy waits to be noticed.
  size_t pendingReceiveBytes() const override { return movesWithoutDescriptor() ? 0 : host_.pendingReceiveBytes(); }
  void addPollFds(std::vector<pollfd>& fds) const override { host_.addPollFds(fds); }
  // The host connection says goodbye for both: a second goodbye on it would be a frame the peer does not expect.
  void closeGracefully() override {}
  // Also waits for this side's device copies in flight, so that none still touches the caller's buffers once the
  // error that led here reaches the caller (who may free them).
  void abandon(int lostPeer = kNoRank) override;
  void addHangupFds(std::vector<pollfd>& fds) const override { host_.addHangupFds(fds); }
  void checkAlive() override { host_.checkAlive(); }
  int peer() const override { return host_.peer(); }
  const char* describe() const override { return description_.c_str(); }
  // Only its own: what the host connection supports acts on the host messages (chunks) this connection makes,
  // not on the caller's messages.
  ConnectionCapabilities capabilities() override { return ConnectionCapabilities{.descriptorless = this}; }

 protected:
  // "rank R, peer P, <what> (<description>)", the start of every message this connection throws.
  std::string context(const char* what) const;
  // Throws e again with this connection's context in front, keeping its code (for device calls, whose own
  // messages name the call and the driver's text but not the rank or the peer).
  [[noreturn]] void rethrowWithContext(const Error& e, const char* operation) const;
  // Waits for every copy on s to finish, swallowing failures: for destructors, which must not free memory that a
  // copy still reads or writes.
  void drainStream(DeviceStream s) noexcept;
  // Waits for every device copy this connection has in flight (drainStream on each of its streams).
  virtual void drainCopies() noexcept = 0;
  // Runs step() (a progress round); if it throws, drains the copies in flight before the error leaves, for the
  // reason abandon() does.
  template <typename Step>
  bool drainingOnError(Step step) {
    try {
      return step();
    } catch (...) {
      drainCopies();
      throw;
    }
  }

  const int rank_;
  Connection& host_;
  DeviceApi& api_;
  const std::string description_;
  int copiesInFlight_ = 0;  // device copies enqueued whose completion has not been seen
};

}  // namespace chorus
