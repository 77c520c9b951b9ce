// How the C ABI turns failures into result codes: the code is returned, the message kept as the last error (of the
// thread, and of the communicator for argument and usage errors).
#pragma once

#include <new>
#include <stdexcept>
#include <string>

#include "chorus/chorus.h"
#include "core/error.h"

namespace chorus::api {

// Records `message` as this thread's last error (and comm's, for argument and usage errors) and returns code.
chorusResult_t fail(chorusComm_t comm, chorusResult_t code, const std::string& message);
// This thread's last error ("" when none).
const char* threadLastError();

// Runs f, mapping exceptions to result codes; a communicator records its own errors inside its calls.
template <class F>
chorusResult_t guarded(chorusComm_t comm, const char* call, F&& f) {
  try {
    f();
    return chorusSuccess;
  } catch (const Error& e) {
    return fail(comm, e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return fail(comm, chorusSystemError, std::string(call) + ": out of memory");
  } catch (const std::exception& e) {
    return fail(comm, chorusInternalError, std::string(call) + ": internal error: " + e.what());
  }
}

}  // namespace chorus::api
