#include "tests/collectives/case_runner.h"

#include <gtest/gtest.h>

namespace chorus::test {

namespace {

constexpr int kFailuresPerRank = 12;

}  // namespace

void runCases(ThreadWorld& world, const std::vector<CollectiveCase>& cases, std::chrono::seconds deadline) {
  const int n = world.size();
  world.run(
      [&](chorusComm_t comm, int rank) {
        int failures = 0;
        for (const CollectiveCase& c : cases) {
          CaseOutcome outcome = runCase(comm, rank, n, c);
          if (outcome.problem.empty()) continue;
          ADD_FAILURE() << outcome.problem;
          if (outcome.callFailed || ++failures >= kFailuresPerRank) {
            ADD_FAILURE() << "rank " << rank << ": stopped after "
                          << (outcome.callFailed ? "a failed call" : "too many failures");
            return;
          }
        }
      },
      deadline);
}

void runCasesOnNewWorld(int nranks, const std::vector<CollectiveCase>& cases, std::chrono::seconds deadline,
                        const Config& config) {
  ThreadWorld world(nranks, deadline, config);
  if (world.ready()) runCases(world, cases, deadline);
}

}  // namespace chorus::test
