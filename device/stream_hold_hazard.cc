#include "device/stream_hold_hazard.h"

#include <cerrno>
#include <cstdlib>

namespace chorus {

int deviceMaxConnectionsFromEnv() {
  const char* text = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  if (text == nullptr || *text == '\0') return 0;
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || value <= 0 || value > 1024) return 0;  // the runtime ignores such values too
  return static_cast<int>(value);
}

std::string streamHoldHazard(bool mpsEnabled) {
  const int connections = deviceMaxConnectionsFromEnv();
  if (connections > 0 && connections < kDefaultDeviceConnections) {
    return "CUDA_DEVICE_MAX_CONNECTIONS=" + std::to_string(connections) + " puts this process's streams on " +
           std::to_string(connections) + " hardware queue" + (connections == 1 ? "" : "s") +
           ", where a stream held until the call ends can hold the call's own copies behind it";
  }
  if (mpsEnabled && connections < kMpsSafeConnections) {
    return "MPS is on for this GPU, and its clients' streams share few hardware queues, where a stream held until "
           "the call ends can hold the call's own copies behind it (CUDA_DEVICE_MAX_CONNECTIONS=" +
           std::to_string(kMpsSafeConnections) + " lifts this)";
  }
  return "";
}

}  // namespace chorus
