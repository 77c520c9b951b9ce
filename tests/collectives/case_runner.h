// Runs lists of collective cases on a thread world and turns what went wrong into gtest failures.
#pragma once

#include <chrono>
#include <vector>

#include "tests/collectives/collective_case.h"
#include "tests/collectives/suite_knobs.h"
#include "tests/harness/thread_world.h"

namespace chorus::test {

// Every rank runs every case in order; each wrong result is a test failure naming the rank and the case. A rank
// stops at the first call that returns an error (its communicator is then unusable) or after a dozen failures.
void runCases(ThreadWorld& world, const std::vector<CollectiveCase>& cases, std::chrono::seconds deadline);

// Builds a world of nranks with `config` (the suite's settings unless a test changes some), runs the cases on it,
// tears it down.
void runCasesOnNewWorld(int nranks, const std::vector<CollectiveCase>& cases, std::chrono::seconds deadline,
                        const Config& config = suiteConfig());

}  // namespace chorus::test
