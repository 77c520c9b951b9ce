#include "src/flight/flight_dump.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <cerrno>

#include "src/flight/flight_json.h"

namespace chorus {
namespace {

// The identity in a file name: letters, digits, '.', '-' and '_' kept, the rest '_'.
std::string fileNamePart(const std::string& text) {
  std::string s;
  for (char c : text) {
    const bool keep =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
    s += keep ? c : '_';
  }
  return s.empty() ? "comm" : s;
}

}  // namespace

FlightDumpFile::FlightDumpFile(const std::string& dir, const FlightIdentity& id) {
  if (dir.empty()) return;
  path_ = dir + "/chorus-flight-" + fileNamePart(id.commName.empty() ? id.identity : id.commName + "-" + id.identity) +
          "-rank" + std::to_string(id.rank) + ".json";
  temporary_ = path_ + ".tmp";
}

bool FlightDumpFile::write(const FlightRecorder& recorder) const {
  if (path_.empty()) return false;
  if (writing_.exchange(true)) {
    errno = 0;  // not a failure: the other writer writes the same
    return false;
  }
  const bool ok = writeFlightFile(recorder, path_.c_str(), temporary_.c_str());
  const int saved = errno;
  writing_.store(false);
  errno = saved;
  return ok;
}

bool writeFlightFile(const FlightRecorder& recorder, const char* path, const char* temporary) {
  const int fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  bool ok;
  {
    FlightJsonOut out(fd);
    writeFlightJson(recorder, out);
    out.raw("\n");
    out.flush();
    ok = !out.failed();
  }
  const int saved = errno;
  if (close(fd) != 0 && ok) return false;
  if (!ok) {
    unlink(temporary);
    errno = saved;
    return false;
  }
  return rename(temporary, path) == 0;
}

}  // namespace chorus
