#include "src/comm/peer_liveness.h"

#include <algorithm>
#include <string>

#include "core/deadline_wait.h"

namespace chorus {

namespace {
constexpr short kHangup = POLLRDHUP | POLLHUP | POLLERR;
}

size_t PeerLiveness::watch(std::vector<pollfd>& fds) {
  const size_t from = fds.size();
  owner_.clear();
  for (auto& c : conns_) {
    if (!c) continue;
    const size_t before = fds.size();
    c->addHangupFds(fds);
    owner_.insert(owner_.end(), fds.size() - before, c.get());
  }
  return from;
}

void PeerLiveness::report(const std::vector<pollfd>& fds, size_t from) {
  for (size_t i = from; i < fds.size(); ++i) {
    if (fds[i].revents & kHangup) owner_[i - from]->checkAlive();
  }
}

void PeerLiveness::checkNow() {
  fds_.clear();
  const size_t from = watch(fds_);
  if (::poll(fds_.data(), fds_.size(), 0) > 0) report(fds_, from);
}

void PeerLiveness::checkNowAndThen() {
  const auto now = std::chrono::steady_clock::now();
  if (now - lastCheck_ <= std::chrono::milliseconds(100)) return;
  lastCheck_ = now;
  checkNow();
}

std::vector<int> PeerLiveness::lostPeersOtherThan(int except) {
  fds_.clear();
  const size_t from = watch(fds_);
  std::vector<int> lost;
  if (::poll(fds_.data(), fds_.size(), 0) <= 0) return lost;
  for (size_t i = from; i < fds_.size(); ++i) {
    Connection* c = owner_[i - from];
    if (!(fds_[i].revents & kHangup) || c->peer() == except) continue;
    try {
      c->checkAlive();
    } catch (const Error& e) {
      // A peer that gave up is alive: the rank it lost, if it says, is the lost one.
      const int gone = e.lostPeer();
      if (gone == kNoRank || gone == except) continue;
      if (std::find(lost.begin(), lost.end(), gone) == lost.end()) lost.push_back(gone);
    }
  }
  std::sort(lost.begin(), lost.end());
  return lost;
}

void PeerLiveness::throwNamingOthersLost(const Error& e) {
  // When one rank dies its neighbours may fail and exit too; naming every hung-up peer lets the user see the whole
  // picture instead of only the first loss this rank happened to notice.
  const std::vector<int> lost = lostPeersOtherThan(kNoRank);
  if (lost.empty()) return;
  throw Error(e.code(), std::string(e.what()) + "; vanished without a goodbye: rank(s) " + formatRankList(lost),
              Failure::kPeerLost, e.lostPeer() != kNoRank ? e.lostPeer() : lost.front());
}

}  // namespace chorus
