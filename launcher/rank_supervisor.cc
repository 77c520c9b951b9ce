#include "launcher/rank_supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "launcher/core_binding.h"
#include "launcher/rank_environment.h"
#include "launcher/rank_spawner.h"
#include "core/error.h"

extern char** environ;

namespace chorus::launcher {

namespace {

// How long ranks get between SIGTERM and SIGKILL, and how long output may trail the last rank's exit.
constexpr std::chrono::seconds kGracePeriod(2);

std::string signalName(int signal) {
  const char* abbrev = sigabbrev_np(signal);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(signal);
}

void setNonBlocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    throwSystemError("chorusrun: output pipe", "fcntl(O_NONBLOCK)", errno);
  }
}

}  // namespace

RankSupervisor::RankSupervisor(const LaunchOptions& options, std::string programPath, JobEnvironment job, int signalFd,
                               const sigset_t& originalMask)
    : options_(options),
      programPath_(std::move(programPath)),
      job_(std::move(job)),
      signalFd_(signalFd),
      originalMask_(originalMask) {}

RankSupervisor::~RankSupervisor() {
  if (running_ > 0) {
    signalGroup(SIGKILL);
    for (Rank& rank : ranks_) {
      if (!rank.running) continue;
      int status = 0;
      while (::waitpid(rank.pid, &status, 0) < 0 && errno == EINTR) {
      }
      rank.running = false;
    }
  }
  for (OutputStream& stream : streams_) {
    if (stream.fd >= 0) ::close(stream.fd);
  }
}

int RankSupervisor::run() {
  if (options_.timeoutSeconds > 0) {
    timeoutAt_ = Clock::now() +
                 std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options_.timeoutSeconds));
  }
  startRanks();
  while (running_ > 0 || openStreams() > 0) {
    waitForEvents();
    checkTimers();
    if (running_ == 0 && !drainUntil_) {
      // Whatever the ranks left behind in their group goes too; it would otherwise hold the output pipes open.
      signalGroup(SIGKILL);
      drainUntil_ = Clock::now() + kGracePeriod;
    }
    if (drainUntil_ && Clock::now() >= *drainUntil_) break;
  }
  for (OutputStream& stream : streams_) {
    if (stream.fd < 0) continue;
    stream.tagger.finish();
    ::close(stream.fd);
    stream.fd = -1;
  }
  return exitCode_;
}

void RankSupervisor::startRanks() {
  const int worldSize = options_.ranks;
  int devNull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (devNull < 0) throwSystemError("chorusrun: opening /dev/null", "open", errno);
  // The ranks run in a group of their own, in the background as far as a terminal is concerned; one reading
  // the terminal would be stopped (SIGTTIN). So a terminal stdin goes to nobody, any other stdin to rank 0.
  const bool stdinIsTerminal = ::isatty(STDIN_FILENO) == 1;
  // --bind-to: each rank's CPU, chosen before any fork (the child may not allocate); none when the ranks stay free.
  std::vector<cpu_set_t> cpuSets;
  if (options_.binding != Binding::kNone) {
    for (int cpu : rankCpus(options_.binding, allowedCpus(), worldSize, std::max(1, options_.hosts))) {
      cpu_set_t& set = cpuSets.emplace_back();
      CPU_ZERO(&set);
      CPU_SET(cpu, &set);
    }
  }
  std::vector<std::string> argvStrings = options_.command;
  std::vector<char*> argv = pointerArray(argvStrings);
  ranks_.reserve(worldSize);
  for (int r = 0; r < worldSize && !stopping_; ++r) {
    std::vector<std::string> envStrings = rankEnvironment(environ, r, job_);
    std::vector<char*> envp = pointerArray(envStrings);
    int outPipe[2] = {-1, -1};
    int errPipe[2] = {-1, -1};
    if (options_.tagOutput && (::pipe2(outPipe, O_CLOEXEC) != 0 || ::pipe2(errPipe, O_CLOEXEC) != 0)) {
      std::fprintf(stderr, "chorusrun: starting rank %d: pipe2 failed: %s\n", r, std::strerror(errno));
      for (int fd : {outPipe[0], outPipe[1], errPipe[0], errPipe[1]}) {
        if (fd >= 0) ::close(fd);
      }
      stopAll(1);
      break;
    }
    SpawnPlan plan;
    plan.path = programPath_.c_str();
    plan.argv = argv.data();
    plan.envp = envp.data();
    plan.stdinFd = (r == 0 && !stdinIsTerminal) ? -1 : devNull;
    plan.stdoutFd = outPipe[1];
    plan.stderrFd = errPipe[1];
    plan.processGroup = processGroup_;
    plan.signalMask = &originalMask_;
    plan.cpus = cpuSets.empty() ? nullptr : &cpuSets[static_cast<size_t>(r)];
    SpawnOutcome outcome;
    try {
      outcome = spawnRank(plan, r);
    } catch (const Error& e) {
      std::fprintf(stderr, "%s\n", e.what());
      for (int fd : {outPipe[0], outPipe[1], errPipe[0], errPipe[1]}) {
        if (fd >= 0) ::close(fd);
      }
      stopAll(1);
      break;
    }
    if (processGroup_ == 0) processGroup_ = outcome.pid;
    ranks_.push_back(Rank{r, outcome.pid, true});
    ++running_;
    if (options_.tagOutput) {
      ::close(outPipe[1]);
      ::close(errPipe[1]);
      setNonBlocking(outPipe[0]);
      setNonBlocking(errPipe[0]);
      streams_.push_back(OutputStream{outPipe[0], LineTagger(r, STDOUT_FILENO)});
      streams_.push_back(OutputStream{errPipe[0], LineTagger(r, STDERR_FILENO)});
    }
    if (outcome.execErrno != 0) {
      std::fprintf(stderr, "chorusrun: rank %d: cannot execute '%s': %s\n", r, programPath_.c_str(),
                   std::strerror(outcome.execErrno));
      stopAll(127);
    }
  }
  ::close(devNull);
}

void RankSupervisor::waitForEvents() {
  std::vector<pollfd> fds;
  std::vector<OutputStream*> polled;
  fds.push_back(pollfd{signalFd_, POLLIN, 0});
  for (OutputStream& stream : streams_) {
    if (stream.fd < 0) continue;
    fds.push_back(pollfd{stream.fd, POLLIN, 0});
    polled.push_back(&stream);
  }
  // Sleep until the nearest timer; with none, until a signal or output arrives.
  std::optional<Clock::time_point> wakeAt;
  for (const auto& timer : {killAt_, stopping_ ? std::nullopt : timeoutAt_, drainUntil_}) {
    if (timer && (!wakeAt || *timer < *wakeAt)) wakeAt = timer;
  }
  int timeoutMs = -1;
  if (wakeAt) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(*wakeAt - Clock::now()).count();
    timeoutMs = static_cast<int>(std::clamp<long long>(left, 0, 60 * 60 * 1000));
  }
  int rc = ::poll(fds.data(), fds.size(), timeoutMs);
  if (rc < 0) {
    if (errno == EINTR) return;
    throwSystemError("chorusrun: waiting for the ranks", "poll", errno);
  }
  for (size_t i = 0; i < polled.size(); ++i) {
    if (fds[i + 1].revents != 0) relayOutput(*polled[i]);
  }
  if (fds[0].revents != 0) handleSignals();
}

void RankSupervisor::handleSignals() {
  signalfd_siginfo info;
  for (;;) {
    ssize_t n = ::read(signalFd_, &info, sizeof(info));
    if (n < 0 && errno == EINTR) continue;
    if (n != static_cast<ssize_t>(sizeof(info))) break;  // EAGAIN: all read
    int signal = static_cast<int>(info.ssi_signo);
    if (signal == SIGCHLD) continue;  // reaped below, once for however many arrived
    if (!stopping_) {
      std::fprintf(stderr, "chorusrun: got %s; passing it to the ranks\n", signalName(signal).c_str());
      stopAll(128 + signal, signal);
    } else {
      std::fprintf(stderr, "chorusrun: got %s again; killing the ranks\n", signalName(signal).c_str());
      signalGroup(SIGKILL);
    }
  }
  reapChildren();
}

void RankSupervisor::reapChildren() {
  for (;;) {
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid < 0 && errno == EINTR) continue;
    if (pid <= 0) return;  // none ready, or no children left
    for (Rank& rank : ranks_) {
      if (rank.pid != pid || !rank.running) continue;
      rank.running = false;
      --running_;
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0) break;
      if (stopping_) break;  // a consequence of stopping, not news
      if (WIFEXITED(status)) {
        std::fprintf(stderr, "chorusrun: rank %d (pid %d) exited with code %d\n", rank.rank, pid, WEXITSTATUS(status));
        stopAll(WEXITSTATUS(status));
      } else if (WIFSIGNALED(status)) {
        int signal = WTERMSIG(status);
        std::fprintf(stderr, "chorusrun: rank %d (pid %d) was killed by signal %d (%s)%s\n", rank.rank, pid, signal,
                     strsignal(signal), options_.elastic ? "; --elastic: the others go on" : "");
        if (!options_.elastic) {
          stopAll(128 + signal);
        } else if (++lost_ == static_cast<int>(ranks_.size())) {
          exitCode_ = 128 + signal;  // nobody went on
        }
      }
      break;
    }
  }
}

void RankSupervisor::relayOutput(OutputStream& stream) {
  char buffer[65536];
  for (;;) {
    ssize_t n = ::read(stream.fd, buffer, sizeof(buffer));
    if (n > 0) {
      stream.tagger.append(buffer, static_cast<size_t>(n));
      if (static_cast<size_t>(n) < sizeof(buffer)) return;  // drained for now; poll says when there is more
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    // End of stream (or an error, which ends it too).
    stream.tagger.finish();
    ::close(stream.fd);
    stream.fd = -1;
    return;
  }
}

void RankSupervisor::checkTimers() {
  auto now = Clock::now();
  if (timeoutAt_ && !stopping_ && now >= *timeoutAt_) {
    std::fprintf(stderr, "chorusrun: timed out after %g s; ranks still running: %s\n", options_.timeoutSeconds,
                 runningRanks().c_str());
    stopAll(124);
  }
  if (killAt_ && now >= *killAt_) {
    if (running_ > 0) {
      std::fprintf(stderr, "chorusrun: ranks still running %lld s after SIGTERM, sending SIGKILL: %s\n",
                   static_cast<long long>(kGracePeriod.count()), runningRanks().c_str());
    }
    signalGroup(SIGKILL);
    killAt_.reset();
  }
}

void RankSupervisor::stopAll(int exitCode, int signal) {
  if (stopping_) return;
  stopping_ = true;
  exitCode_ = exitCode;
  if (running_ == 0) return;
  signalGroup(signal);
  killAt_ = Clock::now() + kGracePeriod;
}

void RankSupervisor::signalGroup(int signal) {
  // processGroup_ 0 would mean chorusrun's own group.
  if (processGroup_ <= 0) return;
  if (::kill(-processGroup_, signal) != 0 && errno != ESRCH) {
    std::fprintf(stderr, "chorusrun: kill(-%d, %s) failed: %s\n", processGroup_, signalName(signal).c_str(),
                 std::strerror(errno));
  }
}

std::string RankSupervisor::runningRanks() const {
  std::string list;
  for (const Rank& rank : ranks_) {
    if (!rank.running) continue;
    if (!list.empty()) list += ", ";
    list += std::to_string(rank.rank) + " (pid " + std::to_string(rank.pid) + ")";
  }
  return list.empty() ? "none" : list;
}

int RankSupervisor::openStreams() const {
  int open = 0;
  for (const OutputStream& stream : streams_) open += stream.fd >= 0 ? 1 : 0;
  return open;
}

}  // namespace chorus::launcher
