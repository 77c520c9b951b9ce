#include "perf/faults/rank_processes.h"

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace chorus::faults {

double now() { return std::chrono::duration<double>(Clock::now().time_since_epoch()).count(); }

void sendReport(int fd, chorusResult_t result, double time, const char* message) {
  std::ostringstream line;
  line.precision(17);
  line << static_cast<int>(result) << ' ' << time << ' ' << message << '\n';
  std::string s = line.str();
  if (::write(fd, s.data(), s.size()) < 0) _exit(3);
}

// A communicator whose waits last at most timeoutSeconds.
chorusConfig_t withTimeout(double timeoutSeconds) {
  chorusConfig_t config = CHORUS_CONFIG_INITIALIZER;
  config.timeoutSeconds = timeoutSeconds;
  return config;
}

chorusComm_t initOrDie(int nranks, const chorusUniqueId& id, int rank, int reportFd, double timeoutSeconds) {
  chorusComm_t comm = nullptr;
  chorusConfig_t config = withTimeout(timeoutSeconds);
  if (chorusCommInitRankConfig(&comm, nranks, id, rank, &config) != chorusSuccess) {
    sendReport(reportFd, chorusInternalError, now(), chorusGetLastError(nullptr));
    _exit(1);
  }
  return comm;
}

void waitForRelease(int holdFd) {
  char c;
  while (::read(holdFd, &c, 1) > 0) {
  }
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

int leftoverSegments() {
  int n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/dev/shm", ec)) {
    n += e.path().filename().string().rfind("chorus-", 0) == 0;
  }
  return n;
}

RankProcesses::RankProcesses(int n, const Body& body) {
  startStoreKeeper();
  int hold[2];
  if (::pipe(hold) != 0) std::perror("chorus-faults: pipe"), std::exit(2);
  holdWrite_ = hold[1];
  for (int r = 0; r < n; ++r) fork(r, body, hold[0]);
  ::close(hold[0]);
}

void RankProcesses::startStoreKeeper() {
  int p[2];
  if (::pipe(p) != 0) std::perror("chorus-faults: pipe"), std::exit(2);
  keeper_ = ::fork();
  if (keeper_ < 0) std::perror("chorus-faults: fork"), std::exit(2);
  if (keeper_ == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::close(p[0]);
    chorusUniqueId id{};
    if (chorusGetUniqueId(&id) != chorusSuccess) {
      std::fprintf(stderr, "chorus-faults: chorusGetUniqueId: %s\n", chorusGetLastError(nullptr));
      _exit(2);
    }
    if (::write(p[1], &id, sizeof(id)) != static_cast<ssize_t>(sizeof(id))) _exit(3);
    for (;;) ::pause();  // serving the store until the parent kills it
  }
  ::close(p[1]);
  size_t got = 0;
  while (got < sizeof(id_)) {
    ssize_t k = ::read(p[0], reinterpret_cast<char*>(&id_) + got, sizeof(id_) - got);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) {
      std::fprintf(stderr, "chorus-faults: the store keeper exited before serving a store\n");
      std::exit(2);
    }
    got += static_cast<size_t>(k);
  }
  ::close(p[0]);
}

RankProcesses::~RankProcesses() {
  for (pid_t pid : pids_) ::kill(pid, SIGKILL);
  for (pid_t pid : pids_) ::waitpid(pid, nullptr, 0);
  if (keeper_ > 0) {
    ::kill(keeper_, SIGKILL);
    ::waitpid(keeper_, nullptr, 0);
  }
  for (int fd : reads_) ::close(fd);
  if (holdWrite_ >= 0) ::close(holdWrite_);
}

int RankProcesses::spawn(const Body& body) {
  const int r = static_cast<int>(pids_.size());
  fork(r, body, -1);
  return r;
}

void RankProcesses::fork(int r, const Body& body, int holdRead) {
  int p[2];
  if (::pipe(p) != 0) std::perror("chorus-faults: pipe"), std::exit(2);
  pid_t pid = ::fork();
  if (pid < 0) std::perror("chorus-faults: fork"), std::exit(2);
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::close(p[0]);
    if (holdWrite_ >= 0) ::close(holdWrite_);
    body(r, id_, p[1], holdRead);
    _exit(0);
  }
  ::close(p[1]);
  pids_.push_back(pid);
  reads_.push_back(p[0]);
}

void RankProcesses::release() {
  ::close(holdWrite_);
  holdWrite_ = -1;
}

Report RankProcesses::read(int r, double seconds) {
  Report rep;
  std::string line;
  double end = now() + seconds;
  char c;
  while (now() < end) {
    pollfd pfd{reads_[r], POLLIN, 0};
    if (::poll(&pfd, 1, 50) <= 0) continue;
    ssize_t got = ::read(reads_[r], &c, 1);
    if (got <= 0) return rep;
    if (c == '\n') {
      std::istringstream in(line);
      int result = 0;
      in >> result >> rep.time;
      std::getline(in >> std::ws, rep.message);
      rep.result = static_cast<chorusResult_t>(result);
      rep.received = true;
      return rep;
    }
    line += c;
  }
  return rep;
}

}  // namespace chorus::faults
