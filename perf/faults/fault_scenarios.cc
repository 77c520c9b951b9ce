#include "perf/faults/fault_scenarios.h"

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "chorus/chorus.h"
#include "perf/faults/rank_processes.h"

namespace chorus::faults {

Trial timeoutTrial() {
  RankProcesses ranks(2, [](int rank, const chorusUniqueId& id, int out, int hold) {
    chorusComm_t comm = initOrDie(2, id, rank, out, 1);
    if (rank == 1) {
      sendReport(out, chorusSuccess, now(), "absent");
      waitForRelease(hold);
      _exit(0);
    }
    std::vector<float> v(1 << 16, 1.0f);
    double t0 = now();
    chorusResult_t r = chorusAllReduce(v.data(), v.data(), v.size(), chorusFloat32, chorusSum, comm, nullptr);
    sendReport(out, r, now() - t0, chorusGetLastError(comm));
  });
  Trial t;
  Report absent = ranks.read(1, 30);
  Report rep = ranks.read(0, 30);
  ranks.release();
  t.detail = rep.received ? rep.message : "rank 0 reported nothing within 30 s";
  t.ok =
      absent.received && rep.received && rep.result == chorusTimeout && contains(rep.message, "waiting on rank(s) 1");
  t.seconds = rep.time - 1.0;
  return t;
}

namespace {

Trial deadPeerRun(int nranks) {
  const int victim = nranks - 1;
  RankProcesses ranks(nranks, [nranks](int rank, const chorusUniqueId& id, int out, int) {
    chorusComm_t comm = initOrDie(nranks, id, rank, out, 60);
    std::vector<float> v(1 << 20, 1.0f);  // 4 MiB: long enough that the kill lands inside a call
    bool announced = false;
    double end = now() + 60;
    while (now() < end) {
      chorusResult_t r = chorusAllReduce(v.data(), v.data(), v.size(), chorusFloat32, chorusSum, comm, nullptr);
      if (r != chorusSuccess) {
        chorusResult_t async = chorusSuccess;
        chorusCommGetAsyncError(comm, &async);
        std::string msg = std::string(chorusGetLastError(comm)) + (async == r ? " [async error agrees]" : "");
        sendReport(out, r, now(), msg.c_str());
        _exit(0);
      }
      if (!announced) sendReport(out, chorusSuccess, now(), "running");
      announced = true;
    }
    sendReport(out, chorusSuccess, now(), "no error within 60 s");
  });
  Trial t;
  for (int r = 0; r < nranks; ++r) {
    if (!ranks.read(r, 30).received) {
      t.detail = "rank " + std::to_string(r) + " never started";
      return t;
    }
  }
  // Let the loop run into the middle of a call (each takes a few ms).
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  double killed = now();
  ::kill(ranks.pid(victim), SIGKILL);
  t.ok = true;
  double last = killed;
  for (int r = 0; r < victim; ++r) {
    Report rep = ranks.read(r, 30);
    if (t.detail.empty()) t.detail = rep.received ? rep.message : "no report";
    const std::string lost = std::to_string(victim);
    // "peer 2" (the connection lost), "rank 2", or "rank(s) 2" / "rank(s) 0, 2" in the list of vanished ranks.
    bool named = std::regex_search(rep.message, std::regex("(peer|rank(\\(s\\))?) ([0-9]+, )*" + lost + "\\b"));
    bool good =
        rep.received && rep.result == chorusRemoteError && named && contains(rep.message, "[async error agrees]");
    if (!good) t.detail = rep.received ? rep.message : "rank " + std::to_string(r) + ": no report within 30 s";
    t.ok = t.ok && good;
    if (rep.received && rep.time > last) last = rep.time;
  }
  t.seconds = last - killed;
  return t;
}

}  // namespace

Trial deadPeerTrial(int nranks) {
  Trial t = deadPeerRun(nranks);  // every rank reaped by now
  if (int left = leftoverSegments()) {
    t.ok = false;
    t.detail = std::to_string(left) + " chorus segment(s) left in /dev/shm";
  }
  return t;
}

namespace {

// Two ranks as threads of one child process (forked like the other scenarios' ranks, so that this process never
// serves a store or runs threads): rank 0's blocked call is aborted from another thread.
void abortBody(const chorusUniqueId& id, int out) {
  chorusComm_t comms[2] = {nullptr, nullptr};
  chorusConfig_t config = withTimeout(60);
  std::thread peer([&] { chorusCommInitRankConfig(&comms[1], 2, id, 1, &config); });
  chorusCommInitRankConfig(&comms[0], 2, id, 0, &config);
  peer.join();
  if (!comms[0] || !comms[1]) {
    sendReport(out, chorusInternalError, 0, "init failed");
    return;
  }
  auto call = std::async(std::launch::async, [&] {
    std::vector<float> v(1024, 1.0f);
    chorusResult_t r = chorusAllReduce(v.data(), v.data(), v.size(), chorusFloat32, chorusSum, comms[0], nullptr);
    return std::make_pair(r, std::string(chorusGetLastError(nullptr)));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the call is blocked on rank 1 by now
  double t0 = now();
  chorusCommAbort(comms[0]);
  auto [result, message] = call.get();
  sendReport(out, result, now() - t0, message.c_str());
  chorusCommDestroy(comms[1]);
}

}  // namespace

Trial abortTrial() {
  RankProcesses world(1, [](int, const chorusUniqueId& id, int out, int) { abortBody(id, out); });
  Report rep = world.read(0, 120);
  Trial t;
  t.seconds = rep.time;
  t.ok = rep.received && rep.result == chorusRemoteError && contains(rep.message, "abort");
  t.detail = rep.received ? rep.message : "no report within 120 s";
  return t;
}

Trial mismatchTrial() {
  RankProcesses ranks(2, [](int rank, const chorusUniqueId& id, int out, int) {
    chorusComm_t comm = initOrDie(2, id, rank, out, 60);
    std::vector<float> v(2000, 1.0f);
    chorusAllReduce(v.data(), v.data(), 1, chorusFloat32, chorusSum, comm, nullptr);  // both ranks are here
    double t0 = now();
    size_t count = rank == 0 ? 1000 : 2000;
    chorusResult_t r = chorusAllReduce(v.data(), v.data(), count, chorusFloat32, chorusSum, comm, nullptr);
    std::ostringstream start;
    start.precision(17);
    start << t0;
    std::string msg = start.str() + " " + chorusGetLastError(comm);
    sendReport(out, r, now(), msg.c_str());
  });
  Trial t;
  t.ok = true;
  double latestStart = 0, lastError = 0;
  for (int r = 0; r < 2; ++r) {
    Report rep = ranks.read(r, 30);
    std::istringstream in(rep.message);
    double start = 0;
    in >> start;
    std::string message;
    std::getline(in >> std::ws, message);
    bool good = rep.received && rep.result == chorusInvalidUsage && contains(message, "count 1000") &&
                contains(message, "count 2000");
    if (t.detail.empty() || !good) t.detail = message;
    t.ok = t.ok && good;
    latestStart = std::max(latestStart, start);
    lastError = std::max(lastError, rep.time);
  }
  t.seconds = lastError - latestStart;
  return t;
}

int launcherRank(const std::string& timeFile) {
  chorusComm_t comm = nullptr;
  if (chorusCommInitFromEnv(&comm) != chorusSuccess) return 1;
  int rank = -1;
  chorusCommUserRank(comm, &rank);
  { std::ofstream(timeFile + ".pid" + std::to_string(rank)) << ::getpid() << '\n'; }
  std::vector<float> v(1 << 16, 1.0f);
  for (int i = 0; i < 3; ++i) chorusAllReduce(v.data(), v.data(), v.size(), chorusFloat32, chorusSum, comm, nullptr);
  if (rank == 1) {
    {
      std::ofstream out(timeFile);
      out.precision(17);
      out << now() << '\n';
    }
    ::raise(SIGKILL);
  }
  // The others block in a collective rank 1 never joins, until chorusrun ends them.
  chorusAllReduce(v.data(), v.data(), v.size(), chorusFloat32, chorusSum, comm, nullptr);
  return 0;
}

Trial launcherTrial(const std::string& chorusrun, const std::string& self) {
  Trial t;
  char dir[] = "/tmp/chorus-faults-XXXXXX";
  if (!::mkdtemp(dir)) {
    t.detail = std::string("mkdtemp: ") + std::strerror(errno);
    return t;
  }
  std::string timeFile = std::string(dir) + "/death", logFile = std::string(dir) + "/chorusrun.log";
  pid_t pid = ::fork();
  if (pid == 0) {
    FILE* log = std::freopen(logFile.c_str(), "w", stderr);
    if (!log) _exit(126);
    ::execl(chorusrun.c_str(), chorusrun.c_str(), "-n", "3", self.c_str(), "--launcher-rank", timeFile.c_str(),
            static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  double exited = now();
  double died = 0;
  std::ifstream(timeFile) >> died;
  std::stringstream log;
  log << std::ifstream(logFile).rdbuf();
  bool orphans = false;
  for (int r = 0; r < 3; ++r) {
    pid_t rankPid = 0;
    std::ifstream(timeFile + ".pid" + std::to_string(r)) >> rankPid;
    if (rankPid > 0 && ::kill(rankPid, 0) == 0) orphans = true;
  }
  std::string text = log.str();
  t.detail = text.substr(0, text.find('\n'));
  t.ok = died > 0 && WIFEXITED(status) && WEXITSTATUS(status) != 0 && contains(text, "rank 1") &&
         contains(text, "signal 9") && !orphans;
  if (died == 0) t.detail = "rank 1 never reached its death (" + chorusrun + " failed?) " + t.detail;
  if (orphans) t.detail = "a rank outlived chorusrun";
  if (int left = leftoverSegments()) {
    t.ok = false;
    t.detail = std::to_string(left) + " chorus segment(s) left in /dev/shm";
  }
  t.seconds = exited - died;
  std::system((std::string("rm -rf ") + dir).c_str());
  return t;
}

}  // namespace chorus::faults
