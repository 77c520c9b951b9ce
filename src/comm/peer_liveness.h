// Hears of lost peers while a call waits. Any rank's death shows as a hang-up on its connection to every other rank
// (the connections form a full mesh), so even ranks that are not waiting on the lost one hear of it at once instead
// of at the timeout.
#pragma once

#include <poll.h>

#include <chrono>
#include <memory>
#include <vector>

#include "core/error.h"
#include "transports/connection.h"

namespace chorus {

class PeerLiveness {
 public:
  explicit PeerLiveness(std::vector<std::unique_ptr<Connection>>& conns) : conns_(conns) {}

  // Appends every connection's hang-up descriptors to `fds` and returns where they start, for report().
  size_t watch(std::vector<pollfd>& fds);
  // After a poll of `fds`: throws for the first connection whose hang-up descriptor (from `from`) fired.
  void report(const std::vector<pollfd>& fds, size_t from);
  // Polls every connection for a hang-up without waiting; throws chorusRemoteError naming a lost peer.
  void checkNow();
  // checkNow(), at most every 100 ms (the progress loop's rounds come every microsecond or so).
  void checkNowAndThen();
  // For `e`, a peer's loss: throws it again naming every other rank whose connection hung up without a goodbye.
  // Returns when there is none (the caller rethrows `e` as it was).
  void throwNamingOthersLost(const Error& e);

 private:
  // The ranks, other than `except`, whose connections have hung up without a goodbye, in rank order.
  std::vector<int> lostPeersOtherThan(int except);

  std::vector<std::unique_ptr<Connection>>& conns_;
  std::vector<pollfd> fds_;         // checkNow's
  std::vector<Connection*> owner_;  // the connection behind each descriptor watch() added last
  std::chrono::steady_clock::time_point lastCheck_{};
};

}  // namespace chorus
