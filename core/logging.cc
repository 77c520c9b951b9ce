#include "core/logging.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <strings.h>

#include "core/params.h"

namespace chorus {

LogLevel logLevel() {
  static const LogLevel level = [] {
    std::string v = params::debug();
    if (v.empty() || strcasecmp(v.c_str(), "WARN") == 0) return LogLevel::kWarn;
    if (strcasecmp(v.c_str(), "NONE") == 0) return LogLevel::kNone;
    if (strcasecmp(v.c_str(), "INFO") == 0) return LogLevel::kInfo;
    if (strcasecmp(v.c_str(), "TRACE") == 0) return LogLevel::kTrace;
    std::fprintf(stderr, "chorus WARN CHORUS_DEBUG=%s is not one of NONE, WARN, INFO, TRACE; using WARN\n", v.c_str());
    return LogLevel::kWarn;
  }();
  return level;
}

namespace {
thread_local const std::string* currentCommName = nullptr;
}  // namespace

// An unnamed communicator touches no thread-local state: its calls pay nothing for the feature.
CommLogScope::CommLogScope(const std::string& commName) : active_(!commName.empty()) {
  if (!active_) return;
  previous_ = currentCommName;
  currentCommName = &commName;
}

CommLogScope::~CommLogScope() {
  if (active_) currentCommName = previous_;
}

void logLine(LogLevel level, int rank, const std::string& message) {
  static const std::string host = [] {
    char name[256] = {0};
    if (gethostname(name, sizeof(name) - 1) != 0) std::strcpy(name, "?");
    return std::string(name);
  }();
  const char* tag = level == LogLevel::kWarn ? "WARN" : level == LogLevel::kInfo ? "INFO" : "TRACE";
  std::string line = host + ":" + std::to_string(getpid());
  if (rank >= 0) line += " [" + std::to_string(rank) + "]";
  if (currentCommName != nullptr) line += " comm=" + *currentCommName;
  line += " chorus " + std::string(tag) + " " + message + "\n";
  // One write per line so that lines of concurrent ranks do not interleave.
  ssize_t ignored = write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
}

}  // namespace chorus
