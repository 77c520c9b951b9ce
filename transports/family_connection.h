// One connection used by several communicators of one family (a communicator and the children split from it),
// which take turns on it (they share one call lock): every call forwards to the connection they share. The
// connection says goodbye when its last user closes; a user that gives up (an error, an abort) gives up for all,
// since the byte stream is then out of step for every one of them.
#pragma once

#include <memory>
#include <utility>

#include "transports/connection.h"

namespace chorus {

class FamilyConnection final : public Connection {
 public:
  explicit FamilyConnection(std::shared_ptr<Connection> shared) : shared_(std::move(shared)) {}

  // The connection behind `c`, shared from now on: `c` itself becomes a FamilyConnection over it (the first time)
  // so that every user holds it the same way.
  static std::shared_ptr<Connection> share(std::unique_ptr<Connection>& c) {
    if (auto* already = dynamic_cast<FamilyConnection*>(c.get())) return already->shared_;
    std::shared_ptr<Connection> shared(std::move(c));
    c = std::make_unique<FamilyConnection>(shared);
    return shared;
  }

  uint64_t isend(const void* buf, size_t bytes, uint32_t tag) override { return shared_->isend(buf, bytes, tag); }
  uint64_t irecv(void* buf, size_t bytes, uint32_t tag) override { return shared_->irecv(buf, bytes, tag); }
  bool exchange(const void* sendBuf, void* recvBuf, size_t bytes, uint32_t sendTag, uint32_t recvTag,
                uint64_t* sendId, uint64_t* recvId) override {
    return shared_->exchange(sendBuf, recvBuf, bytes, sendTag, recvTag, sendId, recvId);
  }
  bool progress() override { return shared_->progress(); }
  uint64_t sendsDone() const override { return shared_->sendsDone(); }
  uint64_t recvsDone() const override { return shared_->recvsDone(); }
  bool busy() const override { return shared_->busy(); }
  size_t pendingReceiveBytes() const override { return shared_->pendingReceiveBytes(); }
  void addPollFds(std::vector<pollfd>& fds) const override { shared_->addPollFds(fds); }
  void closeGracefully() override {
    if (shared_.use_count() == 1) shared_->closeGracefully();
  }
  void abandon(int lostPeer = kNoRank) override { shared_->abandon(lostPeer); }
  void addHangupFds(std::vector<pollfd>& fds) const override { shared_->addHangupFds(fds); }
  void checkAlive() override { shared_->checkAlive(); }
  int peer() const override { return shared_->peer(); }
  const char* describe() const override { return shared_->describe(); }
  // The shared connection's own: it outlives this user, so the pointers stay good as long as this does.
  ConnectionCapabilities capabilities() override { return shared_->capabilities(); }

 private:
  std::shared_ptr<Connection> shared_;
};

}  // namespace chorus
