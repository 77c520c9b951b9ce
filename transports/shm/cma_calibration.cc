#include "transports/shm/cma_calibration.h"

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

namespace chorus {

namespace {

constexpr size_t kBytes = 2 << 20;
constexpr int kRounds = 3;
// CMA must copy at least this fraction of memcpy's speed. A ring transfer is two copies, done in parallel by the
// sender's and receiver's cores; in the exchanges collectives make, each core does both of them.
constexpr double kWorthRatio = 0.67;

template <typename Copy>
double bestSeconds(Copy copy) {
  double best = 1e9;
  for (int i = 0; i <= kRounds; ++i) {  // the first round warms caches and page tables
    auto t0 = std::chrono::steady_clock::now();
    if (!copy()) return 0;
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (i > 0) best = std::min(best, s);
  }
  return best;
}

CmaSpeed measure() {
  std::vector<char> src(kBytes, 1), dst(kBytes, 0);
  const pid_t self = getpid();
  CmaSpeed speed;
  double cma = bestSeconds([&] {
    iovec local{dst.data(), kBytes}, remote{src.data(), kBytes};
    return ::process_vm_readv(self, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(kBytes);
  });
  double copy = bestSeconds([&] {
    std::memcpy(dst.data(), src.data(), kBytes);
    // Keep the copy from being optimised away.
    return dst[kBytes / 2] == 1;
  });
  if (cma > 0) speed.cmaGBs = kBytes / cma / 1e9;
  if (copy > 0) speed.memcpyGBs = kBytes / copy / 1e9;
  speed.worthIt = cma > 0 && copy > 0 && speed.cmaGBs >= kWorthRatio * speed.memcpyGBs;
  return speed;
}

}  // namespace

const CmaSpeed& cmaSpeed() {
  static const CmaSpeed speed = measure();
  return speed;
}

}  // namespace chorus
