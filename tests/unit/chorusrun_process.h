// What the chorusrun tests share: the built chorusrun run as a child process with its output captured (never left
// behind), and the /proc reading that checks its ranks are gone.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/bootstrap/store.h"
#include "core/params.h"
#include "tests/harness/build_tree.h"
#include "topology/host_identity.h"

extern char** environ;

namespace chorus::chorusrun_testing {

// The line gtest prints when rank's one test passed, as --tag-output prefixes it. (Built by appending: g++ 12
// misreports operator+ chains on a temporary here as overlapping memcpy, -Werror=restrict.)
inline std::string passedLineOf(int rank) {
  std::string line = "[";
  line += std::to_string(rank);
  line += "] [  PASSED  ] 1 test";
  return line;
}

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// The build tree's launcher (the one these tests exercise).
inline std::string chorusrunPath() { return chorus::test::buildTreePath("launcher/chorusrun"); }

inline double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

inline Clock::time_point secondsFromNow(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

struct RunResult {
  int exitCode = -1;  // 128 + signal when chorusrun itself was killed
  std::string out;
  std::string err;
  double seconds = 0;
};

// One chorusrun process with its stdout and stderr captured. Killed (SIGKILL) if the test ends early; its ranks
// then die too (PR_SET_PDEATHSIG), so no test leaves processes behind.
class ChorusrunProcess {
 public:
  explicit ChorusrunProcess(const std::vector<std::string>& args, const std::vector<std::string>& extraEnv = {}) {
    std::vector<std::string> argvStrings = {chorusrunPath()};
    argvStrings.insert(argvStrings.end(), args.begin(), args.end());
    std::vector<std::string> envStrings;
    for (char** e = environ; *e; ++e) envStrings.emplace_back(*e);
    envStrings.insert(envStrings.end(), extraEnv.begin(), extraEnv.end());
    // Everything the child touches is built before fork: the test process may have threads.
    std::vector<char*> argv = pointers(argvStrings);
    std::vector<char*> envp = pointers(envStrings);
    int outPipe[2];
    int errPipe[2];
    EXPECT_EQ(::pipe2(outPipe, O_CLOEXEC), 0);
    EXPECT_EQ(::pipe2(errPipe, O_CLOEXEC), 0);
    int devNull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    start_ = Clock::now();
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(devNull, STDIN_FILENO);
      ::dup2(outPipe[1], STDOUT_FILENO);
      ::dup2(errPipe[1], STDERR_FILENO);
      ::execve(argv[0], argv.data(), envp.data());
      ::_exit(126);
    }
    EXPECT_GT(pid_, 0) << std::strerror(errno);
    ::close(devNull);
    ::close(outPipe[1]);
    ::close(errPipe[1]);
    outFd_ = outPipe[0];
    errFd_ = errPipe[0];
  }

  ~ChorusrunProcess() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      int status;
      ::waitpid(pid_, &status, 0);
    }
    if (outFd_ >= 0) ::close(outFd_);
    if (errFd_ >= 0) ::close(errFd_);
  }

  pid_t pid() const { return pid_; }

  // Reads output until stdout contains every one of `texts`; false if the limit passes or output ends first.
  bool readUntil(const std::vector<std::string>& texts, double limitSeconds) {
    Clock::time_point deadline = secondsFromNow(limitSeconds);
    auto allSeen = [&] {
      return std::all_of(texts.begin(), texts.end(), [&](const std::string& t) { return out_.find(t) != npos; });
    };
    while (!allSeen()) {
      if (!readSome(deadline)) return false;
    }
    return true;
  }

  // Reads until both streams end, then reaps chorusrun; SIGKILLs it (a test failure) if that takes too long.
  RunResult finish(double limitSeconds) {
    Clock::time_point deadline = secondsFromNow(limitSeconds);
    while (outFd_ >= 0 || errFd_ >= 0) {
      if (!readSome(deadline)) {
        ADD_FAILURE() << "chorusrun did not finish within " << limitSeconds << " s; killing it";
        ::kill(pid_, SIGKILL);
        break;
      }
    }
    int status = 0;
    EXPECT_EQ(::waitpid(pid_, &status, 0), pid_);
    reaped_ = true;
    RunResult result;
    result.seconds = secondsSince(start_);
    result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    result.out = out_;
    result.err = err_;
    return result;
  }

 private:
  static constexpr size_t npos = std::string::npos;

  static std::vector<char*> pointers(std::vector<std::string>& strings) {
    std::vector<char*> p;
    for (auto& s : strings) p.push_back(s.data());
    p.push_back(nullptr);
    return p;
  }

  // Waits for and reads whatever output is available; false at the deadline or when both streams ended.
  bool readSome(Clock::time_point deadline) {
    std::vector<pollfd> fds;
    if (outFd_ >= 0) fds.push_back({outFd_, POLLIN, 0});
    if (errFd_ >= 0) fds.push_back({errFd_, POLLIN, 0});
    if (fds.empty()) return false;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    int rc = ::poll(fds.data(), fds.size(), static_cast<int>(left));
    if (rc < 0 && errno == EINTR) return true;
    if (rc <= 0) return false;
    for (const pollfd& p : fds) {
      if (p.revents == 0) continue;
      int& fd = p.fd == outFd_ ? outFd_ : errFd_;
      std::string& sink = p.fd == outFd_ ? out_ : err_;
      char buffer[4096];
      ssize_t n = ::read(fd, buffer, sizeof(buffer));
      if (n > 0) {
        sink.append(buffer, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        ::close(fd);
        fd = -1;
      }
    }
    return true;
  }

  pid_t pid_ = -1;
  bool reaped_ = false;
  int outFd_ = -1;
  int errFd_ = -1;
  std::string out_;
  std::string err_;
  Clock::time_point start_;
};

inline RunResult runChorusrun(const std::vector<std::string>& args, double limitSeconds = 30) {
  ChorusrunProcess process(args);
  return process.finish(limitSeconds);
}

inline std::vector<std::string> sortedLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  return lines;
}

// /proc/<pid>/stat's state and process group; false when the process is gone.
inline bool processState(pid_t pid, char* state, pid_t* group) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return false;
  size_t close = text.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream fields(text.substr(close + 1));
  pid_t parent = 0;
  fields >> *state >> parent >> *group;
  return true;
}

inline bool alive(pid_t pid) {
  char state = 0;
  pid_t group = 0;
  return processState(pid, &state, &group) && state != 'Z' && state != 'X';
}

// Live processes whose process group is `group`.
inline std::vector<pid_t> liveMembersOf(pid_t group) {
  std::vector<pid_t> members;
  DIR* proc = ::opendir("/proc");
  if (!proc) return members;
  while (dirent* entry = ::readdir(proc)) {
    pid_t pid = static_cast<pid_t>(std::atoi(entry->d_name));
    char state = 0;
    pid_t pgrp = 0;
    if (pid > 0 && processState(pid, &state, &pgrp) && pgrp == group && state != 'Z' && state != 'X') {
      members.push_back(pid);
    }
  }
  ::closedir(proc);
  return members;
}

// SIGKILL is asynchronous: a killed process may take a moment to be gone. Polls the condition until the limit.
template <typename Condition>
inline bool becomesTrue(Condition condition, double limitSeconds) {
  Clock::time_point deadline = secondsFromNow(limitSeconds);
  while (!condition()) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

inline std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  std::getline(in, text);
  return text;
}

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/chorusrun_test_XXXXXX";
    path_ = ::mkdtemp(pattern) ? pattern : "";
    EXPECT_FALSE(path_.empty());
  }
  ~TempDir() {
    if (!path_.empty()) std::system(("rm -rf '" + path_ + "'").c_str());
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace chorus::chorusrun_testing
