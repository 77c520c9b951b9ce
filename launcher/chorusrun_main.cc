// chorusrun: starts N ranks of a program on this host around a rendezvous store it serves itself.
#include <pthread.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "launcher/launch_options.h"
#include "launcher/rank_environment.h"
#include "launcher/rank_supervisor.h"
#include "core/bootstrap/store.h"
#include "core/error.h"
#include "core/logging.h"
#include "core/params.h"
#include "topology/host_identity.h"

int main(int argc, char** argv) {
  using namespace chorus::launcher;
  ParsedCommandLine parsed = parseCommandLine(argc, argv);
  if (parsed.showHelp) {
    std::fputs(usageText().c_str(), stdout);
    return 0;
  }
  if (!parsed.error.empty()) {
    std::fprintf(stderr, "chorusrun: %s\n\n%s", parsed.error.c_str(), usageText().c_str());
    return 2;
  }
  const LaunchOptions& options = parsed.options;
  std::string programPath = findExecutable(options.command[0], std::getenv("PATH"));
  if (programPath.empty()) {
    std::fprintf(stderr, "chorusrun: %s: command not found (or not executable)\n", options.command[0].c_str());
    return 127;
  }

  // Blocked before the store's thread exists, so that it inherits the mask: these signals must reach only the
  // signalfd, never a default action on some thread.
  sigset_t handled;
  sigset_t original;
  sigemptyset(&handled);
  for (int signal : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) sigaddset(&handled, signal);
  if (int err = pthread_sigmask(SIG_BLOCK, &handled, &original); err != 0) {
    std::fprintf(stderr, "chorusrun: pthread_sigmask failed: %s\n", std::strerror(err));
    return 1;
  }
  int signalFd = signalfd(-1, &handled, SFD_CLOEXEC | SFD_NONBLOCK);
  if (signalFd < 0) {
    std::fprintf(stderr, "chorusrun: signalfd failed: %s\n", std::strerror(errno));
    return 1;
  }
  // A reader of our stdout may go away (`| head`); that must not kill chorusrun before it has stopped the ranks.
  std::signal(SIGPIPE, SIG_IGN);

  int exitCode = 1;
  try {
    JobEnvironment job;
    job.worldSize = options.ranks;
    job.jobId = makeJobId();
    // The user's secret is kept (a job spanning several launchers needs one secret); otherwise a fresh one.
    // Exported here as well, before the store's thread exists, so that the store chorusrun serves uses it too.
    job.secret = chorus::params::isSet("CHORUS_SECRET") ? chorus::params::secret() : makeSecret();
    if (::setenv("CHORUS_SECRET", job.secret.c_str(), 1) != 0) {
      chorus::throwSystemError("chorusrun: exporting CHORUS_SECRET", "setenv", errno);
    }
    job.hosts = options.hosts;
    if (job.hosts > 0) job.hostIdBase = chorus::hostIdentity();
    chorus::StoreServer store("127.0.0.1", 0, job.jobId);
    job.store = "127.0.0.1:" + std::to_string(store.port());
    CHORUS_INFO(-1, "chorusrun: " << options.ranks << " ranks of " << programPath << ", store " << job.store << ", job "
                                  << job.jobId
                                  << (job.hosts > 0 ? ", " + std::to_string(job.hosts) + " emulated hosts" : ""));
    RankSupervisor supervisor(options, programPath, job, signalFd, original);
    exitCode = supervisor.run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "chorusrun: %s\n", e.what());
  }
  ::close(signalFd);
  return exitCode;
}
