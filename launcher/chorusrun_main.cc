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

#include "core/bootstrap/job_file.h"
#include "core/bootstrap/store.h"
#include "core/error.h"
#include "core/logging.h"
#include "core/params.h"
#include "launcher/launch_options.h"
#include "launcher/rank_environment.h"
#include "launcher/rank_supervisor.h"
#include "topology/host_identity.h"

namespace {

// The job file (core/bootstrap/job_file.h) lives as long as the job: removed however main's block ends, a signal too
// (they reach the signalfd and end the supervisor's run). Without one the job still runs; chorus-inspect then needs
// the job id and secret given.
struct JobFile {
  std::string path;
  explicit JobFile(const chorus::job_file::JobCredentials& job) {
    try {
      path = chorus::job_file::write(job);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "chorusrun: no job file (chorus-inspect will need --job and CHORUS_SECRET): %s\n", e.what());
    }
  }
  ~JobFile() { chorus::job_file::remove(path); }
  JobFile(const JobFile&) = delete;
  JobFile& operator=(const JobFile&) = delete;
};

}  // namespace

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
    const JobFile jobFile({job.store, job.jobId, job.secret, static_cast<long>(getpid())});
    std::fprintf(stderr, "chorusrun: store %s; to look inside the running job: chorus-inspect %s\n", job.store.c_str(),
                 job.store.c_str());
    RankSupervisor supervisor(options, programPath, job, signalFd, original);
    exitCode = supervisor.run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "chorusrun: %s\n", e.what());
  }
  ::close(signalFd);
  return exitCode;
}
