#include "transports/device/process_token.h"

#include <unistd.h>

#include <mutex>
#include <random>

namespace chorus {

uint64_t processToken() {
  static std::mutex mutex;
  static pid_t owner = 0;
  static uint64_t token = 0;
  std::lock_guard<std::mutex> lock(mutex);
  if (owner != ::getpid()) {
    std::random_device entropy;
    token = (uint64_t{entropy()} << 32) ^ entropy() ^ static_cast<uint64_t>(::getpid());
    owner = ::getpid();
  }
  return token;
}

}  // namespace chorus
