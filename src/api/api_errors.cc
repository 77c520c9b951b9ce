#include "src/api/api_errors.h"

#include "src/api/comm_handle.h"
#include "src/api/group.h"

namespace chorus::api {
namespace {
thread_local std::string tlsLastError;
}  // namespace

chorusResult_t fail(chorusComm_t comm, chorusResult_t code, const std::string& message) {
  tlsLastError = message;
  // Only argument errors are recorded here (before the call reached the communicator). Any other error was
  // recorded by the communicator itself, which chorusCommAbort on another thread may already have freed.
  if (code == chorusInvalidArgument && comm && comm->impl) comm->impl->recordError(message);
  // A call that fails inside a group makes the group fail as a whole at its end.
  if (inGroup()) recordGroupFailure(message);
  return code;
}

const char* threadLastError() { return tlsLastError.c_str(); }

}  // namespace chorus::api
