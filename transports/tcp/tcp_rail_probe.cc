#include "transports/tcp/tcp_rail_probe.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>

#include "core/deadline_wait.h"
#include "core/error.h"
#include "transports/tcp/socket_exact.h"

namespace chorus {

namespace {

using Clock = std::chrono::steady_clock;
constexpr uint8_t kGo = 0x47;

// Moves `want[i]` bytes on every fds[i] at once (sending from, or receiving into, a scratch buffer); calls
// done(i) when fds[i]'s bytes are all moved and first(i) when its first bytes move.
template <class OnFirst, class OnDone>
void moveAll(const std::vector<int>& fds, std::vector<size_t> want, bool send, Deadline deadline,
             const std::string& context, OnFirst first, OnDone done) {
  static thread_local std::vector<char> scratch(256 * 1024);
  std::vector<size_t> moved(fds.size(), 0);
  size_t open = 0;
  for (size_t i = 0; i < fds.size(); ++i) open += want[i] > 0;
  while (open > 0) {
    throwIfExpired(deadline, [&] { return context + ": timed out measuring the rails"; });
    std::vector<pollfd> pfds;
    std::vector<size_t> which;
    for (size_t i = 0; i < fds.size(); ++i) {
      if (moved[i] < want[i]) {
        pfds.push_back({fds[i], static_cast<short>(send ? POLLOUT : POLLIN), 0});
        which.push_back(i);
      }
    }
    pollWithin(pfds, deadline, 100, context + ": measuring the rails");
    for (size_t k = 0; k < pfds.size(); ++k) {
      if (pfds[k].revents == 0) continue;
      const size_t i = which[k];
      const size_t n = std::min(scratch.size(), want[i] - moved[i]);
      const ssize_t r = send ? ::send(fds[i], scratch.data(), n, MSG_DONTWAIT | MSG_NOSIGNAL)
                             : ::recv(fds[i], scratch.data(), n, MSG_DONTWAIT);
      if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
      if (r < 0) throwSystemError(context + ": measuring the rails", send ? "send" : "recv", errno);
      if (r == 0) throw Error(chorusRemoteError, context + ": the peer closed while the rails were measured");
      if (moved[i] == 0) first(i);
      moved[i] += static_cast<size_t>(r);
      if (moved[i] == want[i]) {
        done(i);
        --open;
      }
    }
  }
}

}  // namespace

std::vector<uint32_t> railWeights(const std::vector<double>& seconds) {
  std::vector<double> rate;
  double total = 0;
  for (double s : seconds) {
    rate.push_back(1.0 / std::max(s, 1e-6));
    total += rate.back();
  }
  std::vector<uint32_t> w;
  for (double r : rate)
    w.push_back(std::max<uint32_t>(1, static_cast<uint32_t>(std::lround(kWeightScale * r / total))));
  return w;
}

std::vector<uint32_t> probeRailsAsSender(const std::vector<int>& fds, Deadline deadline, const std::string& context) {
  uint8_t go = 0;
  recvExact(fds[0], &go, 1, deadline, context + ": measuring the rails");
  if (go != kGo) throw Error(chorusRemoteError, context + ": the rail probe's go byte is wrong");
  moveAll(fds, std::vector<size_t>(fds.size(), kRailProbeBytes), true, deadline, context, [](size_t) {},
          [](size_t) {});
  std::vector<uint32_t> weights(fds.size());
  recvExact(fds[0], weights.data(), weights.size() * sizeof(uint32_t), deadline, context + ": measuring the rails");
  uint64_t total = 0;
  for (uint32_t w : weights) total += w;
  if (total == 0 || total > 2 * kWeightScale) {
    throw Error(chorusRemoteError, context + ": the rail probe's weights are not sane");
  }
  return weights;
}

std::vector<uint32_t> probeRailsAsReceiver(const std::vector<int>& fds, Deadline deadline,
                                           const std::string& context) {
  uint8_t go = kGo;
  sendExact(fds[0], &go, 1, deadline, context + ": measuring the rails");
  bool started = false;
  Clock::time_point start;
  std::vector<double> seconds(fds.size(), 0);
  moveAll(fds, std::vector<size_t>(fds.size(), kRailProbeBytes), false, deadline, context,
          [&](size_t) {
            if (!started) start = Clock::now();
            started = true;
          },
          [&](size_t i) { seconds[i] = std::chrono::duration<double>(Clock::now() - start).count(); });
  std::vector<uint32_t> weights = railWeights(seconds);
  sendExact(fds[0], weights.data(), weights.size() * sizeof(uint32_t), deadline, context + ": measuring the rails");
  return weights;
}

}  // namespace chorus
