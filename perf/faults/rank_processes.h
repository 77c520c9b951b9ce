// What chorus-faults' scenarios share: ranks as forked processes reporting one line at a time through a pipe,
// one clock for all of them, and the checks every scenario makes afterwards.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "chorus/chorus.h"

namespace chorus::faults {

using Clock = std::chrono::steady_clock;  // CLOCK_MONOTONIC: one clock for every process of the machine

double now();

// A rank's report, one line through its pipe: "<result> <time> <message>".
struct Report {
  bool received = false;
  chorusResult_t result = chorusSuccess;
  double time = 0;
  std::string message;
};

void sendReport(int fd, chorusResult_t result, double time, const char* message);

// Child processes, one per rank, each reporting through its own pipe; killed and reaped on destruction. Their store
// is served by one more child, the store keeper, so that it outlives any rank and so that this process runs no
// thread when it forks: a child forked while another thread held a lock (the sanitizers' allocators take no fork
// precautions) would hang on it.
class RankProcesses {
 public:
  // body(rank, id, reportFd, holdFd): holdFd reads EOF once the parent releases the ranks.
  using Body = std::function<void(int, const chorusUniqueId&, int, int)>;
  RankProcesses(int n, const Body& body);
  ~RankProcesses();
  RankProcesses(const RankProcesses&) = delete;
  RankProcesses& operator=(const RankProcesses&) = delete;
  // One more process (a rank restarted after a loss, say), reporting as process number size(); its holdFd is -1.
  int spawn(const Body& body);
  pid_t pid(int r) const { return pids_[r]; }
  // Lets ranks blocked on holdFd go.
  void release();
  // Process r's next report line, waiting at most `seconds`.
  Report read(int r, double seconds);

 private:
  void fork(int r, const Body& body, int holdRead);
  // Forks the store keeper and reads the unique id of the store it serves into id_.
  void startStoreKeeper();
  chorusUniqueId id_{};
  pid_t keeper_ = -1;
  std::vector<pid_t> pids_;
  std::vector<int> reads_;
  int holdWrite_ = -1;
};

// A communicator whose waits last at most timeoutSeconds.
chorusConfig_t withTimeout(double timeoutSeconds);
// Rank `rank`'s communicator, or a report of the failure and _exit(1).
chorusComm_t initOrDie(int nranks, const chorusUniqueId& id, int rank, int reportFd, double timeoutSeconds);
void waitForRelease(int holdFd);
bool contains(const std::string& s, const std::string& part);
// Shared-memory segments Chorus left in /dev/shm ("/chorus-<pid>-..."): there must be none after any failure.
int leftoverSegments();

}  // namespace chorus::faults
