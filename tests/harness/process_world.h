// A world of N ranks as N child processes of a worker binary (after Gloo's gloo/test/multiproc_test.h): the
// parent serves the rendezvous store, starts every rank in one process group, collects each rank's output and
// exit status, and kills the whole group on the first failure or when the deadline passes.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace chorus::test {

struct ProcessWorldOptions {
  int nranks = 2;
  std::string worker;             // path of the executable every rank runs
  std::vector<std::string> args;  // its arguments (argv[1..])
  // Variables set in every rank on top of this process's environment (CHORUS_RANK and the store come from the
  // harness).
  std::vector<std::pair<std::string, std::string>> env;
  std::chrono::seconds deadline{60};
  // true: this process serves the store (CHORUS_STORE_SERVED=1); false: rank 0 serves it on a free port.
  bool parentServesStore = true;
  // true: the first rank to fail gets the whole group killed at once; false: the others run on (to see how they
  // react to a lost peer) until they exit or the deadline passes.
  bool killOnFirstFailure = true;
};

struct RankOutcome {
  pid_t pid = -1;
  bool exited = false;  // exited normally (exitCode valid); otherwise killed by `signal`
  int exitCode = -1;
  int signal = 0;
  bool killedByHarness = false;  // the harness sent the signal (deadline or another rank's failure)
  std::string output;            // stdout and stderr, interleaved as written (the last 64 KiB)
  bool succeeded() const { return exited && exitCode == 0; }
};

struct ProcessWorldResult {
  bool timedOut = false;     // the deadline passed before every rank exited
  std::string firstFailure;  // which rank failed first and how; "" when all succeeded
  std::vector<RankOutcome> ranks;
  bool allSucceeded() const;
  // Every rank's status and output, for a test failure message.
  std::string describe() const;
};

// Runs options.nranks copies of options.worker to completion and reaps them all; never leaves a child behind
// (each rank dies with the parent too: PR_SET_PDEATHSIG). Problems of the harness itself (fork, pipe) come back
// in firstFailure with every rank killed.
ProcessWorldResult runProcessWorld(const ProcessWorldOptions& options);

}  // namespace chorus::test
