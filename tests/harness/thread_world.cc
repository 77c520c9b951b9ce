#include "tests/harness/thread_world.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <sstream>

#include "src/api/comm_handle.h"

namespace chorus::test {

namespace {

using Clock = std::chrono::steady_clock;

// After an abort every blocked call returns promptly; a body still running this much later never will.
constexpr std::chrono::seconds kAbortGrace{30};

}  // namespace

ThreadWorld::ThreadWorld(int n, std::chrono::seconds deadline, const Config& config)
    : n_(n), config_(config), comms_(n, nullptr), initErrors_(n), busy_(n, false) {
  chorusResult_t r = chorusGetUniqueId(&id_);
  if (r != chorusSuccess) {
    ADD_FAILURE() << "thread world of " << n << ": chorusGetUniqueId failed: " << chorusGetErrorString(r) << ": "
                  << chorusGetLastError(nullptr);
    return;
  }
  threads_.reserve(n);
  for (int rank = 0; rank < n; ++rank) threads_.emplace_back([this, rank] { rankMain(rank); });
  std::unique_lock<std::mutex> lock(mutex_);
  if (!changed_.wait_until(lock, Clock::now() + deadline, [&] { return initialised_ == n_; })) {
    std::ostringstream stuck;
    for (int rank = 0; rank < n_; ++rank) {
      if (initErrors_[rank].empty() && !comms_[rank]) stuck << " " << rank;
    }
    ADD_FAILURE() << "thread world of " << n_ << ": ranks" << stuck.str() << " still inside chorusCommInitRank after "
                  << deadline.count() << " s (they return by themselves after CHORUS_TIMEOUT)";
    return;
  }
  std::ostringstream errors;
  for (int rank = 0; rank < n_; ++rank) {
    if (!initErrors_[rank].empty()) errors << "\n  rank " << rank << ": " << initErrors_[rank];
  }
  if (!errors.str().empty()) {
    ADD_FAILURE() << "thread world of " << n_ << ": chorusCommInitRank failed:" << errors.str();
    return;
  }
  ready_ = true;
}

ThreadWorld::~ThreadWorld() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  for (auto& t : threads_) t.join();
}

void ThreadWorld::rankMain(int rank) {
  chorusComm_t comm = nullptr;
  chorusConfig_t config = config_.toC();
  chorusResult_t r = chorusCommInitRankConfig(&comm, n_, id_, rank, &config);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (r == chorusSuccess) {
      comms_[rank] = comm;
    } else {
      initErrors_[rank] = std::string(chorusGetErrorString(r)) + ": " + chorusGetLastError(nullptr);
      if (initErrors_[rank].empty()) initErrors_[rank] = "failed without a message";
    }
    ++initialised_;
  }
  changed_.notify_all();
  uint64_t seen = 0;
  for (;;) {
    const RankBody* body = nullptr;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) break;
      seen = generation_;
      body = body_;
    }
    try {
      (*body)(comm, rank);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "rank " << rank << ": exception escaped the body: " << e.what();
    } catch (...) {
      ADD_FAILURE() << "rank " << rank << ": unknown exception escaped the body";
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      busy_[rank] = false;
      if (--running_ == n_ - 1) firstDone_ = Clock::now();
    }
    changed_.notify_all();
  }
  // The rank's own thread frees its communicator: after an abort, the body may still have held it.
  if (comm) chorusCommDestroy(comm);
}

std::string ThreadWorld::stuckRanksLocked() const {
  std::ostringstream out;
  for (int rank = 0; rank < n_; ++rank) {
    if (busy_[rank]) out << " " << rank;
  }
  return out.str();
}

bool ThreadWorld::run(const RankBody& body, std::chrono::seconds deadline) {
  if (!ready_) {
    ADD_FAILURE() << "thread world of " << n_ << " is not ready (init failed or an earlier run was aborted)";
    return false;
  }
  const Clock::time_point until = Clock::now() + deadline;
  std::unique_lock<std::mutex> lock(mutex_);
  body_ = &body;
  running_ = n_;
  busy_.assign(n_, true);
  ++generation_;
  changed_.notify_all();
  bool straggling = false;
  while (running_ > 0) {
    Clock::time_point wakeAt = until;
    if (running_ < n_) wakeAt = std::min(wakeAt, firstDone_ + stragglerGrace_);
    if (changed_.wait_until(lock, wakeAt) == std::cv_status::timeout && running_ > 0 && Clock::now() >= wakeAt) {
      straggling = Clock::now() < until;
      break;
    }
  }
  if (running_ == 0) return true;

  const std::string stuck = stuckRanksLocked();
  // chorusCommAbort would free the communicator while the body may still call into it; requesting the abort
  // (its first half) makes every blocked and later call fail, and the rank thread frees the comm at the end.
  for (int rank = 0; rank < n_; ++rank) comms_[rank]->impl->requestAbort();
  if (!changed_.wait_until(lock, Clock::now() + kAbortGrace, [&] { return running_ == 0; })) {
    std::fprintf(stderr,
                 "thread world of %d: ranks%s did not return %lld s after their communicators were aborted; "
                 "cannot join them, giving up on the whole test binary\n",
                 n_, stuckRanksLocked().c_str(), static_cast<long long>(kAbortGrace.count()));
    std::fflush(stderr);
    std::abort();
  }
  ready_ = false;
  if (straggling) {
    ADD_FAILURE() << "thread world of " << n_ << ": ranks" << stuck << " were still running " << stragglerGrace_.count()
                  << " s after another rank's body returned (stuck in a collective its peers left?); "
                     "aborted every communicator";
  } else {
    ADD_FAILURE() << "thread world of " << n_ << ": deadline of " << deadline.count() << " s passed with ranks" << stuck
                  << " still running; aborted every communicator";
  }
  return false;
}

void runThreadWorld(int n, const RankBody& body, std::chrono::seconds deadline, const Config& config) {
  ThreadWorld world(n, deadline, config);
  if (world.ready()) world.run(body, deadline);
}

}  // namespace chorus::test
