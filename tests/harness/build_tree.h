// Where the build tree's programs are: found from the running test binary (<build>/tests/<binary>), not compiled
// in. The tests' objects are the same in every build tree (scripts/test.sh links the plain tree's into its
// sanitizer trees), so no tree's path may be written into them.
#pragma once

#include <string>

namespace chorus::test {

// <build tree>/relative, e.g. buildTreePath("launcher/chorusrun"). Throws std::runtime_error when the running
// binary cannot be found (/proc/self/exe unreadable).
std::string buildTreePath(const std::string& relative);

// The running test binary's own path: process-world tests run it again as their ranks. Throws as above.
std::string selfExecutable();

}  // namespace chorus::test
