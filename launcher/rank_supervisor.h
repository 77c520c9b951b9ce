// Starts the ranks in one process group and watches them until all have exited: reaps them, relays tagged
// output, stops everyone when one fails (with --elastic: exits non-zero; one killed is lost and the others go on),
// on SIGINT/SIGTERM/SIGHUP, or at the timeout.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "launcher/launch_options.h"
#include "launcher/line_tagger.h"
#include "launcher/rank_environment.h"

namespace chorus::launcher {

class RankSupervisor {
 public:
  // job: what every rank's environment shares (rankEnvironment()); signalFd: a signalfd for SIGCHLD, SIGINT,
  // SIGTERM and SIGHUP, which the caller has blocked; originalMask: the mask to give the ranks. Nothing starts
  // until run().
  RankSupervisor(const LaunchOptions& options, std::string programPath, JobEnvironment job, int signalFd,
                 const sigset_t& originalMask);
  // Kills and reaps any rank still running (only when run() did not finish).
  ~RankSupervisor();
  RankSupervisor(const RankSupervisor&) = delete;
  RankSupervisor& operator=(const RankSupervisor&) = delete;

  // Starts every rank, waits for all of them, and returns chorusrun's exit code.
  int run();

 private:
  using Clock = std::chrono::steady_clock;

  struct Rank {
    int rank = 0;
    pid_t pid = -1;
    bool running = false;
  };
  struct OutputStream {
    int fd = -1;  // read end of the rank's pipe; -1 once closed
    LineTagger tagger;
  };

  void startRanks();
  void waitForEvents();
  void handleSignals();
  void reapChildren();
  void relayOutput(OutputStream& stream);
  void checkTimers();
  // Begins stopping every rank (SIGTERM now, SIGKILL after the grace period) and fixes the exit code.
  void stopAll(int exitCode, int signal = SIGTERM);
  void signalGroup(int signal);
  std::string runningRanks() const;
  int openStreams() const;

  const LaunchOptions options_;
  const std::string programPath_;
  const JobEnvironment job_;
  const int signalFd_;
  const sigset_t originalMask_;

  std::vector<Rank> ranks_;
  std::vector<OutputStream> streams_;  // with --tag-output: stdout and stderr of each rank
  pid_t processGroup_ = 0;
  int running_ = 0;
  int lost_ = 0;  // --elastic: ranks killed by a signal
  bool stopping_ = false;
  int exitCode_ = 0;
  std::optional<Clock::time_point> killAt_;      // when stopping: SIGKILL the group then
  std::optional<Clock::time_point> timeoutAt_;   // --timeout
  std::optional<Clock::time_point> drainUntil_;  // all ranks gone: stop waiting for output then
};

}  // namespace chorus::launcher
