// Starts one rank: fork, then only async-signal-safe calls until execve (the parent has a store thread).
#pragma once

#include <sched.h>
#include <signal.h>
#include <sys/types.h>

namespace chorus::launcher {

// Everything the child needs, prepared before fork so that the child never allocates.
struct SpawnPlan {
  const char* path = nullptr;            // the program, already resolved (findExecutable)
  char* const* argv = nullptr;           // null-terminated
  char* const* envp = nullptr;           // null-terminated
  int stdinFd = -1;                      // dup2'ed onto 0 when >= 0
  int stdoutFd = -1;                     // dup2'ed onto 1 when >= 0
  int stderrFd = -1;                     // dup2'ed onto 2 when >= 0
  pid_t processGroup = 0;                // 0: the child leads a new group; else it joins this one
  const sigset_t* signalMask = nullptr;  // the mask the program starts with
  const cpu_set_t* cpus = nullptr;       // non-null: the CPUs the program may run on (sched_setaffinity)
};

struct SpawnOutcome {
  pid_t pid = -1;
  int execErrno = 0;  // non-zero: the child could not exec (it exits 127); the errno says why
};

// Forks and execs; returns once the child has exec'ed or failed to. Throws chorusSystemError if fork fails.
// The child joins the process group, dies with SIGKILL when chorusrun dies, and gets default SIGPIPE handling.
SpawnOutcome spawnRank(const SpawnPlan& plan, int rank);

}  // namespace chorus::launcher
