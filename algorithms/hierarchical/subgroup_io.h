// PeerIO over a subset of the ranks: ranks are renumbered 0..k-1 in the order given, so every flat algorithm
// runs unchanged within a host or among host leaders.
#pragma once

#include <vector>

#include "algorithms/peer_io.h"

namespace chorus {

class SubgroupIO final : public PeerIO {
 public:
  // `members` are ranks of `parent`, each once; the calling rank must be one of them.
  SubgroupIO(PeerIO& parent, const std::vector<int>& members);

  int rank() const override { return index_; }
  int size() const override { return static_cast<int>(members_.size()); }
  Request isend(int peer, const void* buf, size_t bytes) override;
  Request irecv(int peer, void* buf, size_t bytes) override;
  void wait(const Request& r) override { parent_.wait(r); }
  void waitAndReduce(const Request& r, const void* landing, void* out, const void* with, size_t count,
                     chorusDataType_t type, chorusRedOp_t op) override {
    parent_.waitAndReduce(r, landing, out, with, count, type, op);
  }
  Request waitReduceAndSend(const Request& r, const void* landing, void* out, const void* with, size_t count,
                            chorusDataType_t type, chorusRedOp_t op, int peer) override {
    return parent_.waitReduceAndSend(r, landing, out, with, count, type, op, global(peer));
  }
  void exchange(int peer, const void* send, void* recv, size_t bytes) override {
    parent_.exchange(global(peer), send, recv, bytes);
  }
  void waitAll() override { parent_.waitAll(); }
  Reducer& reducer() override { return parent_.reducer(); }
  void copy(void* dst, const void* src, size_t bytes) override { parent_.copy(dst, src, bytes); }
  char* slot(SlotPool pool, int index) override { return parent_.slot(pool, index); }
  int slots() const override { return parent_.slots(); }
  char* workspace(size_t bytes) override { return parent_.workspace(bytes); }
  char* scratch(size_t bytes) override { return parent_.scratch(bytes); }
  size_t sliceBytes() const override { return parent_.sliceBytes(); }

 private:
  int global(int peer) const;

  PeerIO& parent_;
  const std::vector<int>& members_;
  int index_ = -1;
};

}  // namespace chorus
