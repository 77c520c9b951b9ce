#include "launcher/rank_environment.h"

#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <string_view>

#include "src/core/error.h"

namespace chorus::launcher {

namespace {

// The variables chorusrun owns; inherited values of these would describe some other job.
constexpr std::array<std::string_view, 6> kRankVariables = {"CHORUS_RANK",  "CHORUS_WORLD_SIZE",   "CHORUS_LOCAL_RANK",
                                                            "CHORUS_STORE", "CHORUS_STORE_SERVED", "CHORUS_JOB_ID"};

bool isRankVariable(std::string_view entry) {
  for (std::string_view name : kRankVariables) {
    if (entry.size() > name.size() && entry.substr(0, name.size()) == name && entry[name.size()] == '=') return true;
  }
  return false;
}

bool isExecutableFile(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

std::string makeJobId() {
  uint8_t random[8];
  size_t filled = 0;
  while (filled < sizeof(random)) {
    ssize_t n = ::getrandom(random + filled, sizeof(random) - filled, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throwSystemError("chorusrun: making a job id", "getrandom", errno);
    filled += static_cast<size_t>(n);
  }
  char hex[2 * sizeof(random) + 1];
  for (size_t i = 0; i < sizeof(random); ++i) std::snprintf(hex + 2 * i, 3, "%02x", random[i]);
  return std::string(hex, 2 * sizeof(random));
}

std::vector<std::string> rankEnvironment(const char* const* base, int rank, int worldSize, const std::string& store,
                                         const std::string& jobId) {
  std::vector<std::string> env;
  for (const char* const* entry = base; entry && *entry; ++entry) {
    if (!isRankVariable(*entry)) env.emplace_back(*entry);
  }
  env.push_back("CHORUS_RANK=" + std::to_string(rank));
  env.push_back("CHORUS_WORLD_SIZE=" + std::to_string(worldSize));
  env.push_back("CHORUS_LOCAL_RANK=" + std::to_string(rank));
  env.push_back("CHORUS_STORE=" + store);
  env.push_back("CHORUS_STORE_SERVED=1");
  env.push_back("CHORUS_JOB_ID=" + jobId);
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
