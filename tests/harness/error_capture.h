// Catching the chorus::Error a piece of code throws, for tests that check codes and messages.
#pragma once

#include <utility>

#include "core/error.h"

namespace chorus::test {

// The chorus::Error that f() throws, or one with code chorusSuccess when it throws none.
template <typename F>
Error errorFrom(F&& f) {
  try {
    std::forward<F>(f)();
  } catch (const Error& e) {
    return e;
  }
  return Error(chorusSuccess, "no error thrown");
}

}  // namespace chorus::test
