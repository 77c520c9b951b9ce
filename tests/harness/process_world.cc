#include "tests/harness/process_world.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <sstream>

#include "core/bootstrap/launch_spec.h"
#include "core/bootstrap/store.h"
#include "core/error.h"

extern char** environ;

namespace chorus::test {

namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kOutputCap = 64 * 1024;
// SIGKILLed ranks vanish at once; this bounds the wait for them should the kernel be slow to tear one down.
constexpr std::chrono::seconds kReapGrace{20};

std::string errnoText(const char* call) { return std::string(call) + " failed: " + std::strerror(errno); }

// A port on 127.0.0.1 that was free a moment ago (for rank 0 to serve the store on; a race we accept in tests).
uint16_t freeLoopbackPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throwSystemError("choosing a store port", "socket", errno);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    int err = errno;
    ::close(fd);
    throwSystemError("choosing a store port", "bind/getsockname", err);
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// This process's environment with `overrides` replacing any variable of the same name.
std::vector<std::string> environmentWith(const std::vector<std::pair<std::string, std::string>>& overrides) {
  std::vector<std::string> out;
  for (char** e = environ; *e; ++e) {
    std::string entry(*e);
    std::string name = entry.substr(0, entry.find('='));
    bool replaced = std::any_of(overrides.begin(), overrides.end(), [&](const auto& o) { return o.first == name; });
    if (!replaced) out.push_back(entry);
  }
  for (const auto& [name, value] : overrides) out.push_back(name + "=" + value);
  return out;
}

// Runs in the child between fork and execve: async-signal-safe calls only, nothing allocated.
[[noreturn]] void becomeRank(char* const* argv, char* const* envp, pid_t group, pid_t parent, int outFd,
                             const sigset_t* emptyMask) {
  if (::setpgid(0, group) != 0) ::_exit(126);
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) ::_exit(126);
  // The parent may have died before prctl took effect; then nothing would ever kill this rank.
  if (::getppid() != parent) ::_exit(126);
  if (::dup2(outFd, STDOUT_FILENO) < 0 || ::dup2(outFd, STDERR_FILENO) < 0) ::_exit(126);
  ::sigprocmask(SIG_SETMASK, emptyMask, nullptr);
  ::execve(argv[0], argv, envp);
  static const char kMessage[] = "process world: execve of the worker failed\n";
  ssize_t ignored = ::write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
  (void)ignored;
  ::_exit(127);
}

std::string statusText(const RankOutcome& r) {
  std::ostringstream out;
  if (r.pid < 0) {
    out << "never started";
  } else if (r.exited) {
    out << "exit " << r.exitCode;
  } else if (r.signal) {
    out << "killed by signal " << r.signal << " (" << strsignal(r.signal) << ")";
  } else {
    out << "not reaped";
  }
  if (r.killedByHarness) out << ", killed by the harness";
  return out.str();
}

// The children of one run: forks them into one process group, and kills and reaps whatever is left when it goes.
class RankGroup {
 public:
  RankGroup(ProcessWorldResult& result, bool killOnFirstFailure)
      : result_(result), killOnFirstFailure_(killOnFirstFailure) {}
  ~RankGroup() {
    killAll();
    for (size_t r = 0; r < result_.ranks.size(); ++r) {
      if (alive(r)) reapBlocking(r);
    }
    for (int fd : outFds_) {
      if (fd >= 0) ::close(fd);
    }
  }

  // Forks rank `rank`; false (with result_.firstFailure set) when the system refused.
  bool spawn(int rank, std::vector<std::string> argvStrings, std::vector<std::string> envStrings) {
    std::vector<char*> argv = pointers(argvStrings);
    std::vector<char*> envp = pointers(envStrings);
    sigset_t emptyMask;
    sigemptyset(&emptyMask);
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return harnessFailed(rank, errnoText("pipe2"));
    const pid_t parent = ::getpid();
    pid_t pid = ::fork();
    if (pid < 0) {
      ::close(fds[0]);
      ::close(fds[1]);
      return harnessFailed(rank, errnoText("fork"));
    }
    if (pid == 0) becomeRank(argv.data(), envp.data(), group_, parent, fds[1], &emptyMask);
    ::close(fds[1]);
    if (group_ == 0) group_ = pid;
    // Also from this side, so that a kill of the group cannot miss a child that has not run yet (EACCES once it
    // has exec'd, ESRCH once it is gone: both mean it already joined or needs no joining).
    ::setpgid(pid, group_);
    result_.ranks[rank].pid = pid;
    outFds_[rank] = fds[0];
    return true;
  }

  void prepare(int n) {
    result_.ranks.assign(n, RankOutcome{});
    outFds_.assign(n, -1);
    reaped_.assign(n, false);
  }

  // Kills every rank started so far (the harness itself failed).
  void abandon() { killAll(); }

  // Waits for every rank to exit, collecting output; kills the group on the first failure or at `until`.
  void supervise(Clock::time_point until) {
    Clock::time_point reapBy = Clock::time_point::max();
    while (anyAlive() || anyOpen()) {
      Clock::time_point now = Clock::now();
      if (!killed_ && now >= until) {
        result_.timedOut = true;
        if (result_.firstFailure.empty()) result_.firstFailure = "deadline passed with ranks still running";
        killAll();
      }
      if (killed_ && reapBy == Clock::time_point::max()) reapBy = now + kReapGrace;
      if (now >= reapBy) {
        result_.firstFailure +=
            "; some ranks could not be reaped " + std::to_string(kReapGrace.count()) + " s after SIGKILL";
        return;  // the destructor reaps them, blocking
      }
      Clock::time_point wakeAt = std::min(killed_ ? reapBy : until, now + std::chrono::milliseconds(100));
      pollOutput(static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(wakeAt - now).count()));
      reapExited();
    }
  }

 private:
  bool alive(size_t r) const { return result_.ranks[r].pid > 0 && !reaped_[r]; }
  bool anyAlive() const {
    for (size_t r = 0; r < result_.ranks.size(); ++r) {
      if (alive(r)) return true;
    }
    return false;
  }
  bool anyOpen() const {
    return std::any_of(outFds_.begin(), outFds_.end(), [](int fd) { return fd >= 0; });
  }

  bool harnessFailed(int rank, const std::string& why) {
    result_.firstFailure = "harness: starting rank " + std::to_string(rank) + ": " + why;
    return false;
  }

  void killAll() {
    if (killed_ || group_ == 0) return;
    killed_ = true;
    for (size_t r = 0; r < result_.ranks.size(); ++r) {
      if (alive(r)) result_.ranks[r].killedByHarness = true;
    }
    ::kill(-group_, SIGKILL);
  }

  void pollOutput(int timeoutMs) {
    std::vector<pollfd> fds;
    std::vector<size_t> owners;
    for (size_t r = 0; r < outFds_.size(); ++r) {
      if (outFds_[r] >= 0) {
        fds.push_back({outFds_[r], POLLIN, 0});
        owners.push_back(r);
      }
    }
    if (fds.empty()) return;
    if (::poll(fds.data(), fds.size(), std::max(timeoutMs, 0)) <= 0) return;
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      char buffer[4096];
      ssize_t got = ::read(fds[i].fd, buffer, sizeof(buffer));
      if (got < 0 && errno == EINTR) continue;
      std::string& out = result_.ranks[owners[i]].output;
      if (got <= 0) {
        ::close(outFds_[owners[i]]);
        outFds_[owners[i]] = -1;
        continue;
      }
      out.append(buffer, static_cast<size_t>(got));
      if (out.size() > kOutputCap) out.erase(0, out.size() - kOutputCap);
    }
  }

  void record(size_t r, int status) {
    RankOutcome& o = result_.ranks[r];
    reaped_[r] = true;
    o.exited = WIFEXITED(status);
    if (o.exited) o.exitCode = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) o.signal = WTERMSIG(status);
    if (!o.succeeded() && !o.killedByHarness && result_.firstFailure.empty()) {
      result_.firstFailure = "rank " + std::to_string(r) + " failed first: " + statusText(o);
      if (killOnFirstFailure_) killAll();
    }
  }

  void reapExited() {
    for (size_t r = 0; r < result_.ranks.size(); ++r) {
      if (!alive(r)) continue;
      int status = 0;
      pid_t got = ::waitpid(result_.ranks[r].pid, &status, WNOHANG);
      if (got == result_.ranks[r].pid) record(r, status);
    }
  }

  void reapBlocking(size_t r) {
    int status = 0;
    pid_t got;
    do {
      got = ::waitpid(result_.ranks[r].pid, &status, 0);
    } while (got < 0 && errno == EINTR);
    if (got == result_.ranks[r].pid) record(r, status);
    reaped_[r] = true;
  }

  ProcessWorldResult& result_;
  const bool killOnFirstFailure_;
  std::vector<int> outFds_;
  std::vector<bool> reaped_;
  pid_t group_ = 0;
  bool killed_ = false;
};

}  // namespace

bool ProcessWorldResult::allSucceeded() const {
  return !timedOut && firstFailure.empty() && !ranks.empty() &&
         std::all_of(ranks.begin(), ranks.end(), [](const RankOutcome& r) { return r.succeeded(); });
}

std::string ProcessWorldResult::describe() const {
  std::ostringstream out;
  out << (allSucceeded() ? "all ranks succeeded" : firstFailure.empty() ? "failed" : firstFailure);
  if (timedOut) out << " (deadline passed)";
  for (size_t r = 0; r < ranks.size(); ++r) {
    out << "\n--- rank " << r << " (pid " << ranks[r].pid << "): " << statusText(ranks[r]) << " ---";
    if (!ranks[r].output.empty()) out << "\n" << ranks[r].output;
  }
  return out.str();
}

ProcessWorldResult runProcessWorld(const ProcessWorldOptions& options) {
  ProcessWorldResult result;
  const Clock::time_point until = Clock::now() + options.deadline;
  std::unique_ptr<StoreServer> store;
  std::string jobId = "process-world-" + randomHex(8);
  uint16_t port = 0;
  try {
    if (options.parentServesStore) {
      store = std::make_unique<StoreServer>("127.0.0.1", 0, jobId);
      port = store->port();
    } else {
      port = freeLoopbackPort();
    }
  } catch (const std::exception& e) {
    result.firstFailure = std::string("harness: starting the store: ") + e.what();
    return result;
  }
  if (options.nranks < 1 || options.nranks > 1024) {
    result.firstFailure = "harness: nranks " + std::to_string(options.nranks) + " is outside [1, 1024]";
    return result;
  }
  std::vector<std::string> argv = {options.worker};
  argv.insert(argv.end(), options.args.begin(), options.args.end());

  RankGroup group(result, options.killOnFirstFailure);
  group.prepare(options.nranks);
  for (int rank = 0; rank < options.nranks; ++rank) {
    std::vector<std::pair<std::string, std::string>> vars = {
        {"CHORUS_RANK", std::to_string(rank)},
        {"CHORUS_WORLD_SIZE", std::to_string(options.nranks)},
        {"CHORUS_LOCAL_RANK", std::to_string(rank)},
        {"CHORUS_STORE", "127.0.0.1:" + std::to_string(port)},
        {"CHORUS_STORE_SERVED", options.parentServesStore ? "1" : "0"},
        {"CHORUS_JOB_ID", jobId},
    };
    vars.insert(vars.end(), options.env.begin(), options.env.end());
    if (!group.spawn(rank, argv, environmentWith(vars))) {
      group.abandon();
      break;
    }
  }
  group.supervise(until);
  return result;
}

}  // namespace chorus::test
