#include "transports/device/layered_device_connection.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>

namespace chorus {

LayeredDeviceConnection::LayeredDeviceConnection(int rank, Connection& host, DeviceApi& api, std::string description)
    : rank_(rank), host_(host), api_(api), description_(std::move(description)) {
  // Readable from the start and forever: nothing ever reads the count.
  alwaysReadyFd_ = ::eventfd(1, EFD_CLOEXEC | EFD_NONBLOCK);
  if (alwaysReadyFd_ < 0) {
    throwSystemError("rank " + std::to_string(rank_) + ": device connection to rank " + std::to_string(host.peer()),
                     "eventfd", errno);
  }
}

LayeredDeviceConnection::~LayeredDeviceConnection() { ::close(alwaysReadyFd_); }

void LayeredDeviceConnection::addPollFds(std::vector<pollfd>& fds) const {
  host_.addPollFds(fds);
  if (awaitingDevice()) fds.push_back(pollfd{alwaysReadyFd_, POLLIN, 0});
}

void LayeredDeviceConnection::abandon() {
  host_.abandon();
  drainCopies();
}

std::string LayeredDeviceConnection::context(const char* what) const {
  return "rank " + std::to_string(rank_) + ": " + what + " to rank " + std::to_string(host_.peer()) + " (" +
         description_ + ")";
}

void LayeredDeviceConnection::rethrowWithContext(const Error& e, const char* operation) const {
  throw Error(e.code(), context(operation) + ": " + e.what());
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
