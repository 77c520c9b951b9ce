#include "transports/device/layered_device_connection.h"

namespace chorus {

LayeredDeviceConnection::LayeredDeviceConnection(int rank, Connection& host, DeviceApi& api, std::string description)
    : rank_(rank), host_(host), api_(api), description_(std::move(description)) {}

void LayeredDeviceConnection::abandon(int lostPeer) {
  host_.abandon(lostPeer);
  drainCopies();
}

std::string LayeredDeviceConnection::context(const char* what) const {
  return errorContext(rank_, host_.peer(), std::string(what) + " (" + description_ + ")");
}

void LayeredDeviceConnection::rethrowWithContext(const Error& e, const char* operation) const {
  throw e.withMessage(context(operation) + ": " + e.what());
}

void LayeredDeviceConnection::drainStream(DeviceStream s) noexcept {
  if (s == nullptr) return;
  try {
    api_.synchronize(s);
  } catch (...) {
    // A failed copy is already reported (or the connection is being torn down after another error).
  }
}

}  // namespace chorus
