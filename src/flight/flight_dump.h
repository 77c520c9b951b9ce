// A rank's flight-record file in CHORUS_FLIGHT_DIR: chorus-flight-<comm>-rank<r>.json, written whole under a
// temporary name and renamed, so that a reader never sees half a file. Writing uses only open, write, close and
// rename, so a fatal signal's handler may write it too; two writers at once (a failure and SIGUSR1) never mix: the
// second skips.
#pragma once

#include <atomic>
#include <string>

#include "src/flight/flight_recorder.h"

namespace chorus {

class FlightDumpFile {
 public:
  // dir "": no file (write() returns false).
  FlightDumpFile(const std::string& dir, const FlightIdentity& id);
  const std::string& path() const { return path_; }
  // Writes the recorder's every kept call; false when there is no file, another write is under way, or it failed
  // (errno says why).
  bool write(const FlightRecorder& recorder) const;

 private:
  std::string path_, temporary_;
  mutable std::atomic<bool> writing_{false};
};

// Writes `recorder` to `path` (through path + ".tmp" and a rename); false with errno on failure.
bool writeFlightFile(const FlightRecorder& recorder, const char* path, const char* temporary);

}  // namespace chorus
