#include "launcher/rank_spawner.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "core/error.h"

namespace chorus::launcher {

namespace {

// Reports errno to the parent through the exec-status pipe and exits; async-signal-safe.
[[noreturn]] void childFailed(int statusFd) {
  int err = errno;
  ssize_t ignored = ::write(statusFd, &err, sizeof(err));
  (void)ignored;
  ::_exit(127);
}

// Runs in the child between fork and execve: async-signal-safe calls only, no allocation.
[[noreturn]] void becomeRank(const SpawnPlan& plan, pid_t parent, int statusFd) {
  if (::setpgid(0, plan.processGroup) != 0) childFailed(statusFd);
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) childFailed(statusFd);
  // chorusrun may have died before prctl took effect; then nothing would ever kill this rank.
  if (::getppid() != parent) ::_exit(127);
  if (plan.stdinFd >= 0 && ::dup2(plan.stdinFd, STDIN_FILENO) < 0) childFailed(statusFd);
  if (plan.stdoutFd >= 0 && ::dup2(plan.stdoutFd, STDOUT_FILENO) < 0) childFailed(statusFd);
  if (plan.stderrFd >= 0 && ::dup2(plan.stderrFd, STDERR_FILENO) < 0) childFailed(statusFd);
  // chorusrun ignores SIGPIPE, and ignored dispositions survive exec; the program expects the default.
  struct sigaction defaultAction {};
  defaultAction.sa_handler = SIG_DFL;
  sigemptyset(&defaultAction.sa_mask);
  if (::sigaction(SIGPIPE, &defaultAction, nullptr) != 0) childFailed(statusFd);
  if (plan.signalMask && ::sigprocmask(SIG_SETMASK, plan.signalMask, nullptr) != 0) childFailed(statusFd);
  if (plan.cpus && ::sched_setaffinity(0, sizeof(cpu_set_t), plan.cpus) != 0) childFailed(statusFd);
  ::execve(plan.path, plan.argv, plan.envp);
  childFailed(statusFd);
}

}  // namespace

SpawnOutcome spawnRank(const SpawnPlan& plan, int rank) {
  const std::string context = "chorusrun: starting rank " + std::to_string(rank);
  int status[2];
  if (::pipe2(status, O_CLOEXEC) != 0) throwSystemError(context, "pipe2", errno);
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    ::close(status[0]);
    ::close(status[1]);
    throwSystemError(context, "fork", err);
  }
  if (pid == 0) becomeRank(plan, parent, status[1]);

  // The parent sets the group too, so that it holds before anyone signals the group (the child may not have run).
  // EACCES means the child already exec'ed, having done it itself.
  ::setpgid(pid, plan.processGroup == 0 ? pid : plan.processGroup);
  ::close(status[1]);
  SpawnOutcome outcome;
  outcome.pid = pid;
  // The pipe closes on a successful exec (O_CLOEXEC) or carries errno when the child failed.
  int err = 0;
  ssize_t n;
  do {
    n = ::read(status[0], &err, sizeof(err));
  } while (n < 0 && errno == EINTR);
  ::close(status[0]);
  if (n == static_cast<ssize_t>(sizeof(err))) outcome.execErrno = err;
  return outcome;
}

}  // namespace chorus::launcher
