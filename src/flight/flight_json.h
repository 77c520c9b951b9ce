// The flight record as JSON, written without allocating when it goes to a descriptor, so that a fatal signal's
// handler can write it (only write(2) and the recorder's lock-free reads): the dumps and the inspector's answers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "src/flight/flight_recorder.h"

namespace chorus {

// Buffered output to a descriptor (write(2) only: async-signal-safe) or to a string.
class FlightJsonOut {
 public:
  explicit FlightJsonOut(int fd) : fd_(fd) {}
  explicit FlightJsonOut(std::string* text) : text_(text) {}
  ~FlightJsonOut() { flush(); }
  FlightJsonOut(const FlightJsonOut&) = delete;
  FlightJsonOut& operator=(const FlightJsonOut&) = delete;

  void raw(const char* s);
  void raw(const char* s, size_t n);
  void quoted(const char* s);  // a JSON string, escaped
  void number(int64_t v);
  void flush();
  bool failed() const { return failed_; }  // a write to the descriptor failed

 private:
  int fd_ = -1;
  std::string* text_ = nullptr;
  char buf_[4096];
  size_t used_ = 0;
  bool failed_ = false;
};

// What the JSON names the process by: set once, before any signal handler may write.
struct FlightProcess {
  char host[256] = "";
  int64_t pid = 0;
};
const FlightProcess& flightProcess();

// One recorder as a JSON object: who (comm, identity, rank, size, host, pid), its clock (nowMs and the wall clock
// at start) and its newest `newest` calls, oldest first. Field by field: docs/hangs.md.
void writeFlightJson(const FlightRecorder& recorder, FlightJsonOut& out, size_t newest = SIZE_MAX);

}  // namespace chorus
