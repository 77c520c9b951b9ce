// A world of N ranks as N threads of this process, each holding its own communicator (after Gloo's
// gloo/test/base_test.h). Built once and reused for many calls: init costs milliseconds per rank.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "chorus/chorus.h"
#include "chorus/chorus.hpp"

namespace chorus::test {

// What every rank runs: the same program (SPMD) on its own communicator.
using RankBody = std::function<void(chorusComm_t comm, int rank)>;

class ThreadWorld {
 public:
  // Once any rank's body has returned, the others must follow within this long: in an SPMD body they are at
  // most one collective behind, so a longer wait means a rank is stuck on a peer that has left.
  static constexpr std::chrono::seconds kStragglerGrace{20};

  // Starts n rank threads which join one communicator through a fresh unique id, each with `config` (fields left
  // empty come from the environment). Waits at most `deadline` for every rank to be initialised; on failure adds a
  // gtest failure naming each rank's error and ready() is false. A rank stuck inside the init cannot be aborted: it
  // returns by itself after its timeout, which a test should therefore set low (the destructor waits for it).
  ThreadWorld(int n, std::chrono::seconds deadline, const Config& config = {});
  // Destroys every communicator and joins every thread.
  ~ThreadWorld();
  ThreadWorld(const ThreadWorld&) = delete;
  ThreadWorld& operator=(const ThreadWorld&) = delete;

  int size() const { return n_; }
  // Replaces kStragglerGrace for later run()s (the harness's own tests shorten it).
  void setStragglerGrace(std::chrono::seconds grace) { stragglerGrace_ = grace; }
  // True when every rank is initialised and no earlier run() had to abort the world.
  bool ready() const { return ready_; }

  // Runs body on every rank at once and returns true when all returned in time. When `deadline` passes (or the
  // ranks finish more than kStragglerGrace apart), aborts every communicator so that blocked calls return, adds
  // a gtest failure saying which ranks were stuck, waits for the bodies to return, and returns false; the world
  // is then no longer ready(). Exceptions escaping a body are reported as test failures.
  bool run(const RankBody& body, std::chrono::seconds deadline);

 private:
  void rankMain(int rank);
  std::string stuckRanksLocked() const;

  const int n_;
  const Config config_;
  chorusUniqueId id_{};
  bool ready_ = false;
  std::chrono::seconds stragglerGrace_ = kStragglerGrace;
  std::vector<std::thread> threads_;
  std::vector<chorusComm_t> comms_;

  // Everything below is guarded by mutex_.
  std::mutex mutex_;
  std::condition_variable changed_;
  int initialised_ = 0;  // ranks whose chorusCommInitRank returned
  std::vector<std::string> initErrors_;
  uint64_t generation_ = 0;  // bumped for each run(); ranks run body once per generation
  const RankBody* body_ = nullptr;
  std::vector<bool> busy_;  // rank is inside body for the current generation
  int running_ = 0;
  std::chrono::steady_clock::time_point firstDone_;
  bool stopping_ = false;
};

// Builds a world of n ranks, runs body on it once, tears it down; failures (including a deadline) fail the test.
void runThreadWorld(int n, const RankBody& body, std::chrono::seconds deadline, const Config& config = {});

}  // namespace chorus::test
