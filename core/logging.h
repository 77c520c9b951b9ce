// Leveled logging to stderr, set by CHORUS_DEBUG (WARN default, INFO, TRACE). Each line names host, pid and rank.
#pragma once

#include <sstream>
#include <string>

namespace chorus {

enum class LogLevel { kNone = 0, kWarn = 1, kInfo = 2, kTrace = 3 };

// The level chosen by CHORUS_DEBUG, read once.
LogLevel logLevel();
// Writes one line at `level` if enabled; `rank` < 0 when not yet known. The line names the communicator the calling
// thread works for, when it has a name (CommLogScope).
void logLine(LogLevel level, int rank, const std::string& message);

// For its scope, log lines of the calling thread carry "comm=NAME" (nothing for an empty name); scopes nest.
class CommLogScope {
 public:
  explicit CommLogScope(const std::string& commName);
  ~CommLogScope();
  CommLogScope(const CommLogScope&) = delete;
  CommLogScope& operator=(const CommLogScope&) = delete;

 private:
  bool active_;
  const std::string* previous_ = nullptr;
};

}  // namespace chorus

#define CHORUS_LOG(level, rank, expr)                                  \
  do {                                                                 \
    if (::chorus::logLevel() >= (level)) {                             \
      std::ostringstream chorus_log_os_;                               \
      chorus_log_os_ << expr;                                          \
      ::chorus::logLine((level), (rank), chorus_log_os_.str());        \
    }                                                                  \
  } while (0)
#define CHORUS_WARN(rank, expr) CHORUS_LOG(::chorus::LogLevel::kWarn, rank, expr)
#define CHORUS_INFO(rank, expr) CHORUS_LOG(::chorus::LogLevel::kInfo, rank, expr)
#define CHORUS_TRACE(rank, expr) CHORUS_LOG(::chorus::LogLevel::kTrace, rank, expr)
