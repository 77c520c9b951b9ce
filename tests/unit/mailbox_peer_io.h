// An in-memory world of threads for code that speaks PeerIO (the link probe, the clock offset): ordered channels
// between ranks whose links can be given a delay, and a PeerIO over them.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "algorithms/peer_io.h"
#include "core/error.h"
#include "reduce/reducer.h"

namespace chorus::test {

using Clock = std::chrono::steady_clock;

// Ordered in-memory channels between ranks. A message from a to b becomes receivable after the delay the link
// function gives it (simulating a wire); receivers block on a condition variable, at most 20 s.
class Mailboxes {
 public:
  using LinkDelay = std::function<std::chrono::microseconds(int from, int to, size_t bytes)>;
  explicit Mailboxes(LinkDelay delay) : delay_(std::move(delay)) {}

  void post(int from, int to, const void* buf, size_t bytes) {
    Message m{Clock::now() + delay_(from, to, bytes),
              std::vector<char>(static_cast<const char*>(buf), static_cast<const char*>(buf) + bytes)};
    std::lock_guard<std::mutex> lock(mutex_);
    queues_[{from, to}].push_back(std::move(m));
    changed_.notify_all();
  }

  void take(int from, int to, void* buf, size_t bytes) {
    std::unique_lock<std::mutex> lock(mutex_);
    auto& queue = queues_[{from, to}];
    if (!changed_.wait_for(lock, std::chrono::seconds(20), [&] { return !queue.empty(); })) {
      throw Error(chorusTimeout, errorContext(to, from) + ": nothing arrived within 20 s");
    }
    Clock::time_point ready = queue.front().ready;
    lock.unlock();
    std::this_thread::sleep_until(ready);  // the simulated wire, not synchronisation: the message is there
    lock.lock();
    Message m = std::move(queue.front());
    queue.pop_front();
    if (m.data.size() != bytes) {
      throw Error(chorusInternalError, errorContext(to, from) + ": expected " + std::to_string(bytes) + " bytes, got " +
                                           std::to_string(m.data.size()));
    }
    std::memcpy(buf, m.data.data(), bytes);
  }

 private:
  struct Message {
    Clock::time_point ready;
    std::vector<char> data;
  };
  LinkDelay delay_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::pair<int, int>, std::deque<Message>> queues_;
};

class MailboxPeerIO : public PeerIO {
 public:
  MailboxPeerIO(Mailboxes& boxes, int rank, int size) : boxes_(boxes), rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  Request isend(int peer, const void* buf, size_t bytes) override {
    boxes_.post(rank_, peer, buf, bytes);
    return Request{nullptr, true, next_++};
  }
  Request irecv(int peer, void* buf, size_t bytes) override {
    pending_[next_] = {peer, buf, bytes};
    return Request{nullptr, false, next_++};
  }
  void wait(const Request& r) override {
    if (r.isSend) return;
    auto it = pending_.find(r.id);
    ASSERT_NE(it, pending_.end());
    boxes_.take(it->second.peer, rank_, it->second.buf, it->second.bytes);
    pending_.erase(it);
  }
  void waitAll() override {
    while (!pending_.empty()) wait(Request{nullptr, false, pending_.begin()->first});
  }
  Reducer& reducer() override { return hostReducer(); }
  char* slot(SlotPool, int) override { return nullptr; }
  int slots() const override { return 0; }
  char* workspace(size_t) override { return nullptr; }
  size_t sliceBytes() const override { return 1 << 19; }
  char* scratch(size_t) override { return nullptr; }

 private:
  struct Pending {
    int peer;
    void* buf;
    size_t bytes;
  };
  Mailboxes& boxes_;
  int rank_, size_;
  uint64_t next_ = 1;
  std::map<uint64_t, Pending> pending_;
};

}  // namespace chorus::test
