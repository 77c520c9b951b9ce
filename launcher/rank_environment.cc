#include "launcher/rank_environment.h"

#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <string_view>

#include "core/error.h"
#include "topology/host_blocks.h"

namespace chorus::launcher {

namespace {

// The variables chorusrun owns; inherited values of these would describe some other job.
constexpr std::array<std::string_view, 6> kRankVariables = {"CHORUS_RANK",  "CHORUS_WORLD_SIZE",   "CHORUS_LOCAL_RANK",
                                                            "CHORUS_STORE", "CHORUS_STORE_SERVED", "CHORUS_JOB_ID"};

bool isVariable(std::string_view entry, std::string_view name) {
  return entry.size() > name.size() && entry.substr(0, name.size()) == name && entry[name.size()] == '=';
}

bool isRankVariable(std::string_view entry, const JobEnvironment& job) {
  for (std::string_view name : kRankVariables) {
    if (isVariable(entry, name)) return true;
  }
  return (!job.secret.empty() && isVariable(entry, "CHORUS_SECRET")) ||
         (job.hosts > 0 && isVariable(entry, "CHORUS_HOST_ID"));
}

std::string randomHex(size_t bytes, const char* what) {
  std::vector<uint8_t> random(bytes);
  size_t filled = 0;
  while (filled < bytes) {
    ssize_t n = ::getrandom(random.data() + filled, bytes - filled, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throwSystemError(std::string("chorusrun: making ") + what, "getrandom", errno);
    filled += static_cast<size_t>(n);
  }
  static const char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * bytes);
  for (uint8_t b : random) {
    hex.push_back(kDigits[b >> 4]);
    hex.push_back(kDigits[b & 15]);
  }
  return hex;
}

bool isExecutableFile(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

std::string makeJobId() { return randomHex(8, "a job id"); }

std::string makeSecret() { return randomHex(32, "a secret"); }

std::vector<std::string> rankEnvironment(const char* const* base, int rank, const JobEnvironment& job) {
  std::vector<std::string> env;
  for (const char* const* entry = base; entry && *entry; ++entry) {
    if (!isRankVariable(*entry, job)) env.emplace_back(*entry);
  }
  int localRank = rank;
  if (job.hosts > 0) {
    int host = emulatedHostOf(rank, job.worldSize, job.hosts);
    localRank = emulatedLocalRank(rank, job.worldSize, job.hosts);
    env.push_back("CHORUS_HOST_ID=" + job.hostIdBase + "#h" + std::to_string(host));
  }
  env.push_back("CHORUS_RANK=" + std::to_string(rank));
  env.push_back("CHORUS_WORLD_SIZE=" + std::to_string(job.worldSize));
  env.push_back("CHORUS_LOCAL_RANK=" + std::to_string(localRank));
  env.push_back("CHORUS_STORE=" + job.store);
  env.push_back("CHORUS_STORE_SERVED=1");
  env.push_back("CHORUS_JOB_ID=" + job.jobId);
  if (!job.secret.empty()) env.push_back("CHORUS_SECRET=" + job.secret);
  return env;
}

std::string findExecutable(const std::string& program, const char* pathVariable) {
  if (program.empty()) return {};
  if (program.find('/') != std::string::npos) return isExecutableFile(program) ? program : std::string();
  // As execvp: an unset PATH means the confstr default; an empty entry means the current directory.
  std::string path = pathVariable ? pathVariable : "/bin:/usr/bin";
  size_t begin = 0;
  for (;;) {
    size_t end = path.find(':', begin);
    std::string dir = path.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + program;
    if (isExecutableFile(candidate)) return candidate;
    if (end == std::string::npos) return {};
    begin = end + 1;
  }
}

std::vector<char*> pointerArray(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  pointers.reserve(strings.size() + 1);
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

}  // namespace chorus::launcher
