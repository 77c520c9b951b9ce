// The C ABI of the flight recorder: chorusCommDumpFlightRecord (write the record to a file) and
// chorusCommFlightRecord (hand its JSON to the program). docs/hangs.md.
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "chorus/chorus.h"
#include "core/error.h"
#include "src/api/api_errors.h"
#include "src/api/comm_handle.h"
#include "src/comm/comm_engine.h"
#include "src/flight/flight_dump.h"

using chorus::api::fail;

chorusResult_t chorusCommDumpFlightRecord(chorusComm_t comm, const char* path) {
  if (!comm || !comm->impl) return fail(comm, chorusInvalidArgument, "chorusCommDumpFlightRecord: comm is NULL");
  const chorus::CommFlight& flight = comm->impl->flight();
  const std::string target = path != nullptr ? std::string(path) : flight.dumpFile().path();
  if (target.empty()) {
    return fail(comm, chorusInvalidArgument,
                "chorusCommDumpFlightRecord: path is NULL and no CHORUS_FLIGHT_DIR (config flightDir) is set");
  }
  if (!chorus::writeFlightFile(flight.recorder(), target.c_str(), (target + ".tmp").c_str())) {
    const int err = errno;
    return fail(comm, chorusSystemError,
                chorus::errorContext(comm->impl->rank(), "chorusCommDumpFlightRecord to " + target) + ": " +
                    std::strerror(err));
  }
  return chorusSuccess;
}

chorusResult_t chorusCommFlightRecord(chorusComm_t comm, int newest, char* buffer, size_t* size) {
  if (!comm || !comm->impl) return fail(comm, chorusInvalidArgument, "chorusCommFlightRecord: comm is NULL");
  if (!size) return fail(comm, chorusInvalidArgument, "chorusCommFlightRecord: size is NULL");
  if (newest < 0) return fail(comm, chorusInvalidArgument, "chorusCommFlightRecord: newest is negative");
  const std::string json = comm->impl->flight().json(newest == 0 ? SIZE_MAX : static_cast<size_t>(newest));
  const size_t given = *size;
  *size = json.size() + 1;
  if (buffer == nullptr) return chorusSuccess;
  if (given < json.size() + 1) {
    return fail(comm, chorusInvalidArgument,
                "chorusCommFlightRecord: the buffer holds " + std::to_string(given) + " bytes, the record needs " +
                    std::to_string(json.size() + 1));
  }
  std::memcpy(buffer, json.c_str(), json.size() + 1);
  return chorusSuccess;
}
