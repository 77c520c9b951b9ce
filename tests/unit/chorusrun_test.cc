// Runs the built chorusrun binary on small shell programs (and on this test binary as a rank).
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
#include "topology/host_identity.h"

extern char** environ;

namespace chorus {
namespace {

// The line gtest prints when rank's one test passed, as --tag-output prefixes it. (Built by appending: g++ 12
// misreports operator+ chains on a temporary here as overlapping memcpy, -Werror=restrict.)
std::string passedLineOf(int rank) {
  std::string line = "[";
  line += std::to_string(rank);
  line += "] [  PASSED  ] 1 test";
  return line;
}

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

const char* const kChorusrun = CHORUS_BINARY_DIR "/launcher/chorusrun";

double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

Clock::time_point secondsFromNow(double seconds) {
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
    std::vector<std::string> argvStrings = {kChorusrun};
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
      ::execve(kChorusrun, argv.data(), envp.data());
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

RunResult runChorusrun(const std::vector<std::string>& args, double limitSeconds = 30) {
  ChorusrunProcess process(args);
  return process.finish(limitSeconds);
}

std::vector<std::string> sortedLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  return lines;
}

// /proc/<pid>/stat's state and process group; false when the process is gone.
bool processState(pid_t pid, char* state, pid_t* group) {
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

bool alive(pid_t pid) {
  char state = 0;
  pid_t group = 0;
  return processState(pid, &state, &group) && state != 'Z' && state != 'X';
}

// Live processes whose process group is `group`.
std::vector<pid_t> liveMembersOf(pid_t group) {
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
bool becomesTrue(Condition condition, double limitSeconds) {
  Clock::time_point deadline = secondsFromNow(limitSeconds);
  while (!condition()) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

std::string readFile(const std::string& path) {
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

TEST(ChorusrunTest, EveryRankRunsOnceWithItsRank) {
  RunResult r = runChorusrun({"-n", "3", "sh", "-c", "echo $CHORUS_RANK"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(sortedLines(r.out), (std::vector<std::string>{"0", "1", "2"}));
}

TEST(ChorusrunTest, SetsTheRankEnvironmentAndOverridesInheritedValues) {
  ChorusrunProcess process(
      {"-n", "2", "--", "sh", "-c",
       "echo \"$CHORUS_RANK $CHORUS_WORLD_SIZE $CHORUS_LOCAL_RANK $CHORUS_STORE $CHORUS_STORE_SERVED $CHORUS_JOB_ID\""},
      {"CHORUS_RANK=99", "CHORUS_JOB_ID=stale"});
  RunResult r = process.finish(30);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::vector<std::string> lines = sortedLines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  std::regex pattern("([0-9]+) 2 ([0-9]+) 127\\.0\\.0\\.1:[0-9]+ 1 ([0-9a-f]{16})");
  std::set<std::string> jobIds;
  for (int rank = 0; rank < 2; ++rank) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(lines[rank], m, pattern)) << lines[rank];
    EXPECT_EQ(m[1], std::to_string(rank));
    EXPECT_EQ(m[2], std::to_string(rank));
    jobIds.insert(m[3]);
  }
  EXPECT_EQ(jobIds.size(), 1u) << "both ranks must share one job id";
}

// The rank side of RanksMeetAtTheStoreChorusrunServes: skipped unless chorusrun started this process.
TEST(ChorusrunRankSide, JoinTheStore) {
  if (params::storeServed() != "1" || !params::isSet("CHORUS_RANK")) GTEST_SKIP() << "runs only under chorusrun";
  int rank = static_cast<int>(params::asInt("CHORUS_RANK", params::rank(), 0, 1 << 20));
  int size = static_cast<int>(params::asInt("CHORUS_WORLD_SIZE", params::worldSize(), 1, 1 << 20));
  std::string store = params::store();
  size_t colon = store.rfind(':');
  ASSERT_NE(colon, std::string::npos) << store;
  uint16_t port = static_cast<uint16_t>(std::stoi(store.substr(colon + 1)));
  StoreClient client(store.substr(0, colon), port, params::jobId(), rank, Deadline::after(30));
  client.set("rank/" + std::to_string(rank), Bytes{static_cast<uint8_t>(rank)}, Deadline::after(30));
  client.barrier("joined", size, Deadline::after(30));
  for (int peer = 0; peer < size; ++peer) {
    EXPECT_EQ(client.get("rank/" + std::to_string(peer), Deadline::after(30)), Bytes{static_cast<uint8_t>(peer)});
  }
  EXPECT_EQ(client.add("finished", 1, Deadline::after(30)) <= size, true);
}

TEST(ChorusrunTest, RanksMeetAtTheStoreChorusrunServes) {
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  ASSERT_GT(n, 0);
  self[n] = '\0';
  RunResult r = runChorusrun({"-n", "3", "--tag-output", self, "--gtest_filter=ChorusrunRankSide.JoinTheStore"}, 60);
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  for (int rank = 0; rank < 3; ++rank) {
    EXPECT_NE(r.out.find(passedLineOf(rank)), std::string::npos) << r.out;
  }
}

TEST(ChorusrunTest, TagOutputPrefixesEveryLineOfBothStreams) {
  RunResult r = runChorusrun({"-n", "2", "--tag-output", "sh", "-c", "echo a; echo b >&2; echo c; printf tail"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(sortedLines(r.out), (std::vector<std::string>{"[0] a", "[0] c", "[0] tail", "[1] a", "[1] c", "[1] tail"}));
  EXPECT_EQ(sortedLines(r.err), (std::vector<std::string>{"[0] b", "[1] b"}));
}

TEST(ChorusrunTest, AFailingRankStopsTheOthersAndTheirChildrenQuickly) {
  TempDir dir;
  const std::string d = dir.path();
  // Ranks 0 and 2 start a child each and report both pids; rank 1 waits for their reports, then fails.
  const std::string script =
      "if [ \"$CHORUS_RANK\" = 1 ]; then\n"
      "  while [ ! -e " +
      d + "/0 ] || [ ! -e " + d +
      "/2 ]; do sleep 0.01; done\n"
      "  exit 3\n"
      "fi\n"
      "sleep 30 &\n"
      "echo \"$$ $!\" > " +
      d + "/$CHORUS_RANK.tmp && mv " + d + "/$CHORUS_RANK.tmp " + d +
      "/$CHORUS_RANK\n"
      "wait\n";
  RunResult r = runChorusrun({"--timeout", "60", "-n", "3", "sh", "-c", script});
  EXPECT_NE(r.exitCode, 0);
  EXPECT_EQ(r.exitCode, 3) << r.err;
  EXPECT_LT(r.seconds, 10.0);
  EXPECT_NE(r.err.find("chorusrun: rank 1 (pid "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("exited with code 3"), std::string::npos) << r.err;

  std::vector<pid_t> pids;
  for (int rank : {0, 2}) {
    std::istringstream in(readFile(d + "/" + std::to_string(rank)));
    pid_t shell = 0;
    pid_t child = 0;
    in >> shell >> child;
    ASSERT_GT(shell, 0);
    ASSERT_GT(child, 0);
    pids.push_back(shell);
    pids.push_back(child);
  }
  for (pid_t pid : pids) EXPECT_TRUE(becomesTrue([pid] { return !alive(pid); }, 5.0)) << "pid " << pid << " lives";
  // Rank 0 leads the ranks' process group; nothing may be left in it.
  pid_t group = pids[0];
  EXPECT_TRUE(becomesTrue([group] { return liveMembersOf(group).empty(); }, 5.0));
}

TEST(ChorusrunTest, ARankKilledBySignalIsReported) {
  RunResult r = runChorusrun({"-n", "2", "sh", "-c", "if [ $CHORUS_RANK = 0 ]; then kill -9 $$; fi; exec sleep 30"});
  EXPECT_EQ(r.exitCode, 128 + SIGKILL) << r.err;
  EXPECT_LT(r.seconds, 10.0);
  EXPECT_NE(r.err.find("rank 0 (pid "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("was killed by signal 9 (Killed)"), std::string::npos) << r.err;
}

TEST(ChorusrunTest, ElasticLetsTheOthersGoOnAfterARankIsKilled) {
  TempDir dir;
  const std::string pidFile = dir.path() + "/rank0";
  // Rank 0 dies by SIGKILL; rank 1 outlives it and then exits 0: chorusrun reports the loss and exits 0.
  const std::string script = "if [ $CHORUS_RANK = 0 ]; then echo $$ > " + pidFile + ".tmp && mv " + pidFile + ".tmp " +
                             pidFile + " && kill -9 $$; fi\n"
                             "while [ ! -e " + pidFile + " ] || kill -0 $(cat " + pidFile +
                             ") 2>/dev/null; do sleep 0.01; done\n"
                             "echo went on\n";
  RunResult r = runChorusrun({"--elastic", "--timeout", "60", "-n", "2", "sh", "-c", script});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("went on"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("rank 0 (pid "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--elastic: the others go on"), std::string::npos) << r.err;
  // A non-zero exit still stops the job, and a job whose every rank was lost fails.
  r = runChorusrun({"--elastic", "-n", "2", "sh", "-c", "if [ $CHORUS_RANK = 0 ]; then exit 4; fi; exec sleep 30"});
  EXPECT_EQ(r.exitCode, 4) << r.err;
  r = runChorusrun({"--elastic", "-n", "2", "sh", "-c", "kill -9 $$"});
  EXPECT_EQ(r.exitCode, 128 + SIGKILL) << r.err;
}

TEST(ChorusrunTest, TimeoutKillsEveryRankAndNamesThem) {
  RunResult r = runChorusrun({"--timeout", "0.5", "-n", "2", "sleep", "30"});
  EXPECT_EQ(r.exitCode, 124) << r.err;
  EXPECT_GE(r.seconds, 0.45);
  EXPECT_LT(r.seconds, 5.0);
  EXPECT_NE(r.err.find("timed out after 0.5 s; ranks still running: 0 (pid "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(", 1 (pid "), std::string::npos) << r.err;
}

TEST(ChorusrunTest, SigtermIsForwardedToTheRanks) {
  ChorusrunProcess process({"-n", "2", "--tag-output", "sh", "-c", "echo ready; exec sleep 30"});
  ASSERT_TRUE(process.readUntil({"[0] ready", "[1] ready"}, 20));
  auto start = Clock::now();
  ASSERT_EQ(::kill(process.pid(), SIGTERM), 0);
  RunResult r = process.finish(20);
  EXPECT_EQ(r.exitCode, 128 + SIGTERM) << r.err;
  EXPECT_LT(secondsSince(start), 1.5) << "sleep dies of SIGTERM at once; no SIGKILL should be needed";
  EXPECT_NE(r.err.find("got SIGTERM"), std::string::npos) << r.err;
}

TEST(ChorusrunTest, RanksIgnoringSigintAreKilledAfterTheGracePeriod) {
  ChorusrunProcess process(
      {"-n", "2", "--tag-output", "sh", "-c", "trap '' INT TERM; echo ready; while :; do sleep 0.1; done"});
  ASSERT_TRUE(process.readUntil({"[0] ready", "[1] ready"}, 20));
  auto start = Clock::now();
  ASSERT_EQ(::kill(process.pid(), SIGINT), 0);
  RunResult r = process.finish(20);
  double stopSeconds = secondsSince(start);
  EXPECT_EQ(r.exitCode, 128 + SIGINT) << r.err;
  EXPECT_GE(stopSeconds, 1.5);
  EXPECT_LT(stopSeconds, 10.0);
  EXPECT_NE(r.err.find("sending SIGKILL"), std::string::npos) << r.err;
}

TEST(ChorusrunTest, ChildrenLeftBehindBySuccessfulRanksAreKilled) {
  RunResult r = runChorusrun({"-n", "1", "sh", "-c", "sleep 30 & echo $!"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_LT(r.seconds, 10.0);
  pid_t child = static_cast<pid_t>(std::atoi(r.out.c_str()));
  ASSERT_GT(child, 0) << r.out;
  EXPECT_TRUE(becomesTrue([child] { return !alive(child); }, 5.0));
}

// "rank local-rank host-id" per rank, sorted by rank (ranks < 10).
std::vector<std::string> hostLines(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
  std::vector<std::string> all = args;
  all.insert(all.end(), {"sh", "-c", "echo \"$CHORUS_RANK $CHORUS_LOCAL_RANK ${CHORUS_HOST_ID-unset}\""});
  ChorusrunProcess process(all, env);
  RunResult r = process.finish(30);
  EXPECT_EQ(r.exitCode, 0) << r.err;
  return sortedLines(r.out);
}

TEST(ChorusrunTest, HostsSplitsTheRanksIntoContiguousEmulatedHosts) {
  // 5 ranks on 2 hosts: 3 + 2; the user's CHORUS_HOST_ID is the base of the emulated ids.
  EXPECT_EQ(hostLines({"-n", "5", "--hosts", "2"}, {"CHORUS_HOST_ID=rack1"}),
            (std::vector<std::string>{"0 0 rack1#h0", "1 1 rack1#h0", "2 2 rack1#h0", "3 0 rack1#h1",
                                      "4 1 rack1#h1"}));
  EXPECT_EQ(hostLines({"-n", "4", "--hosts=4"}, {"CHORUS_HOST_ID=x"}),
            (std::vector<std::string>{"0 0 x#h0", "1 0 x#h1", "2 0 x#h2", "3 0 x#h3"}));
  // Without an id of the user's, the base is this host's identity (hostname/boot-id).
  std::vector<std::string> lines = hostLines({"-n", "3", "--hosts", "2"});
  ASSERT_EQ(lines.size(), 3u);
  std::regex pattern("([0-9]) ([0-9]) ([^ ]+/[^ ]+)#h([01])");
  std::set<std::string> bases;
  for (int rank = 0; rank < 3; ++rank) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(lines[rank], m, pattern)) << lines[rank];
    EXPECT_EQ(m[1], std::to_string(rank));
    EXPECT_EQ(m[2], std::to_string(rank == 2 ? 0 : rank));
    EXPECT_EQ(m[4], rank < 2 ? "0" : "1");
    bases.insert(m[3]);
  }
  EXPECT_EQ(bases.size(), 1u);
}

// --bind-to core: each rank on one CPU of those chorusrun may use, an emulated host's ranks on its share of them.
TEST(ChorusrunTest, BindToCorePutsEachEmulatedHostOnItsShareOfTheCores) {
  cpu_set_t mine;
  ASSERT_EQ(sched_getaffinity(0, sizeof(mine), &mine), 0);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &mine)) cpus.push_back(c);
  }
  const int n = static_cast<int>(cpus.size());
  const int perHost = std::max(1, n / 2);
  ChorusrunProcess process({"-n", "4", "--hosts", "2", "--bind-to", "core", "sh", "-c",
                            "echo \"$CHORUS_RANK $(grep Cpus_allowed_list /proc/self/status | cut -f2)\""});
  RunResult r = process.finish(30);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::vector<std::string> expected;
  for (int rank = 0; rank < 4; ++rank) {
    const int host = rank / 2, local = rank % 2;
    expected.push_back(std::to_string(rank) + " " +
                       std::to_string(cpus[static_cast<size_t>((host * perHost + local % perHost) % n)]));
  }
  EXPECT_EQ(sortedLines(r.out), expected);
  // Unbound (the default), a rank may run wherever chorusrun (started by this test) may.
  std::ifstream status("/proc/self/status");
  std::string line, allowed;
  while (std::getline(status, line)) {
    if (line.rfind("Cpus_allowed_list:", 0) == 0) allowed = line.substr(line.find_first_not_of(" \t", 18));
  }
  ChorusrunProcess free({"-n", "1", "sh", "-c", "grep Cpus_allowed_list /proc/self/status | cut -f2"});
  RunResult f = free.finish(30);
  ASSERT_EQ(f.exitCode, 0) << f.err;
  EXPECT_EQ(f.out, allowed + "\n");
  RunResult wrong = runChorusrun({"-n", "2", "--bind-to", "socket", "true"});
  EXPECT_EQ(wrong.exitCode, 2);
  EXPECT_NE(wrong.err.find("--bind-to takes core or none, got 'socket'"), std::string::npos) << wrong.err;
}

TEST(ChorusrunTest, WithoutHostsTheHostIdIsLeftAlone) {
  EXPECT_EQ(hostLines({"-n", "2"}, {"CHORUS_HOST_ID=mine"}), (std::vector<std::string>{"0 0 mine", "1 1 mine"}));
  std::vector<std::string> lines = hostLines({"-n", "2"});
  ASSERT_EQ(lines.size(), 2u);
  if (!std::getenv("CHORUS_HOST_ID")) {
    EXPECT_EQ(lines[0], "0 0 unset");
  }
}

// The rank side of RanksOfEmulatedHostsSeeTheirHostIdentity: skipped unless chorusrun started this process.
TEST(ChorusrunRankSide, HostIdentityIsTheEmulatedHost) {
  if (params::storeServed() != "1" || !params::isSet("CHORUS_HOST_ID")) GTEST_SKIP() << "runs only under chorusrun";
  int rank = static_cast<int>(params::asInt("CHORUS_RANK", params::rank(), 0, 1 << 20));
  EXPECT_EQ(hostIdentity(), "base#h" + std::to_string(rank < 2 ? 0 : 1));
}

TEST(ChorusrunTest, RanksOfEmulatedHostsSeeTheirHostIdentity) {
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  ASSERT_GT(n, 0);
  self[n] = '\0';
  ChorusrunProcess process({"-n", "3", "--hosts", "2", "--tag-output", self,
                            "--gtest_filter=ChorusrunRankSide.HostIdentityIsTheEmulatedHost"},
                           {"CHORUS_HOST_ID=base"});
  RunResult r = process.finish(60);
  EXPECT_EQ(r.exitCode, 0) << r.out << r.err;
  for (int rank = 0; rank < 3; ++rank) {
    EXPECT_NE(r.out.find(passedLineOf(rank)), std::string::npos) << r.out;
  }
}

// CHORUS_SECRET of every rank, sorted.
std::vector<std::string> secrets(const std::vector<std::string>& env = {}) {
  ChorusrunProcess process({"-n", "3", "sh", "-c", "echo \"${CHORUS_SECRET-unset}\""}, env);
  RunResult r = process.finish(30);
  EXPECT_EQ(r.exitCode, 0) << r.err;
  return sortedLines(r.out);
}

TEST(ChorusrunTest, EveryRankGetsTheSameFreshSecret) {
  std::vector<std::string> first = secrets();
  ASSERT_EQ(first.size(), 3u);
  EXPECT_TRUE(std::regex_match(first[0], std::regex("[0-9a-f]{64}"))) << first[0];
  EXPECT_EQ(first[0], first[1]);
  EXPECT_EQ(first[0], first[2]);
  std::vector<std::string> second = secrets();
  ASSERT_EQ(second.size(), 3u);
  EXPECT_NE(second[0], first[0]) << "each job gets its own secret";
}

TEST(ChorusrunTest, TheUsersSecretIsKept) {
  EXPECT_EQ(secrets({"CHORUS_SECRET=correct horse battery staple"}),
            (std::vector<std::string>(3, "correct horse battery staple")));
}

TEST(ChorusrunTest, HostsCommandLineErrors) {
  RunResult tooMany = runChorusrun({"-n", "2", "--hosts", "3", "true"});
  EXPECT_EQ(tooMany.exitCode, 2);
  EXPECT_NE(tooMany.err.find("--hosts 3 needs at least as many ranks, got -n 2"), std::string::npos) << tooMany.err;
  RunResult zero = runChorusrun({"-n", "2", "--hosts", "0", "true"});
  EXPECT_EQ(zero.exitCode, 2);
  EXPECT_NE(zero.err.find("--hosts needs a number of hosts"), std::string::npos) << zero.err;
  RunResult missing = runChorusrun({"-n", "2", "--hosts"});
  EXPECT_EQ(missing.exitCode, 2);
  RunResult help = runChorusrun({"--help"});
  EXPECT_NE(help.out.find("--hosts H"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("CHORUS_SECRET"), std::string::npos) << help.out;
}

TEST(ChorusrunTest, CommandLineErrors) {
  RunResult help = runChorusrun({"--help"});
  EXPECT_EQ(help.exitCode, 0);
  EXPECT_NE(help.out.find("usage: chorusrun -n N"), std::string::npos) << help.out;

  RunResult noRanks = runChorusrun({"true"});
  EXPECT_EQ(noRanks.exitCode, 2);
  EXPECT_NE(noRanks.err.find("-n N is required"), std::string::npos) << noRanks.err;

  RunResult badRanks = runChorusrun({"-n", "zero", "true"});
  EXPECT_EQ(badRanks.exitCode, 2);

  RunResult unknown = runChorusrun({"-n", "1", "--frobnicate", "true"});
  EXPECT_EQ(unknown.exitCode, 2);
  EXPECT_NE(unknown.err.find("unknown option '--frobnicate'"), std::string::npos) << unknown.err;

  RunResult missing = runChorusrun({"-n", "2", "/nonexistent/program"});
  EXPECT_EQ(missing.exitCode, 127);
  EXPECT_NE(missing.err.find("/nonexistent/program"), std::string::npos) << missing.err;

  RunResult dashDash = runChorusrun({"-n1", "--", "sh", "-c", "echo $1", "sh", "--tag-output"});
  EXPECT_EQ(dashDash.exitCode, 0) << dashDash.err;
  EXPECT_EQ(dashDash.out, "--tag-output\n");
}

}  // namespace
}  // namespace chorus
