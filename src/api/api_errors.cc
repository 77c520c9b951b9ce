#include "src/api/api_errors.h"

#include "src/api/comm_handle.h"
#include "src/api/group.h"

namespace chorus::api {
namespace {
thread_local std::string tlsLastError;
}  // namespace

chorusResult_t fail(chorusComm_t comm, chorusResult_t code, const std::string& message) {
  tlsLastError = message;
  // Argument and usage errors are recorded here too (found before the call reached the communicator, or refused by
  // it before it ran anything). Any other error was recorded by the communicator itself, which chorusCommAbort on
  // another thread may already have freed.
  if ((code == chorusInvalidArgument || code == chorusInvalidUsage) && comm && comm->impl) {
    comm->impl->recordError(message);
  }
  // A call that fails inside a group makes the group fail as a whole at its end.
  if (inGroup()) recordGroupFailure(message);
  return code;
}

const char* threadLastError() { return tlsLastError.c_str(); }

}  // namespace chorus::api
