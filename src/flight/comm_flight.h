// A communicator's flight recorder with what goes around it: its dump file (CHORUS_FLIGHT_DIR), its registration
// with the process's inspect listener (flight_service.h), and the card in the job's store that tells chorus-inspect
// where to ask.
#pragma once

#include <cstdint>
#include <string>

#include "core/bootstrap/store.h"
#include "core/deadline.h"
#include "src/flight/flight_dump.h"
#include "src/flight/flight_recorder.h"

namespace chorus {

// The store keys of the inspect cards: a counter, and one card per communicator and rank under it.
inline constexpr const char* kInspectCardCount = "chorus/inspect/cards";
inline std::string inspectCardKey(int64_t index) { return "chorus/inspect/card/" + std::to_string(index); }

class CommFlight {
 public:
  // capacity 0: nothing recorded. dumpDir "": no dump files (and no signal handlers).
  CommFlight(size_t capacity, const std::string& dumpDir, FlightIdentity id);
  ~CommFlight();
  CommFlight(const CommFlight&) = delete;
  CommFlight& operator=(const CommFlight&) = delete;

  FlightRecorder& recorder() { return recorder_; }
  const FlightRecorder& recorder() const { return recorder_; }
  // Writes the dump file, saying why in the log (INFO where written, WARN where it failed); no-op without a dir.
  void dump(const char* why) const;
  const FlightDumpFile& dumpFile() const { return file_; }
  // The record as JSON (its newest `newest` calls): chorusCommFlightRecord's answer.
  std::string json(size_t newest = SIZE_MAX) const;
  // Puts this rank's card in the job's store: "host:port rank size identity", host being this end's address of the
  // store connection (IPv4 or IPv6, in brackets), which whoever reaches the store reaches too, across the lab's
  // namespaces as well. Best effort: a failure is logged, the communicator goes on.
  void publishCard(StoreClient& store, Deadline deadline) const;

 private:
  FlightRecorder recorder_;
  FlightDumpFile file_;
};

}  // namespace chorus
