// chorus-perf: nccl-tests-style bandwidth sweeps of one collective, through the public C API only.
// Run one process per rank: chorusrun -n 2 chorus-perf allreduce -b 8 -e 64M -f 2

#include <cstdio>
#include <utility>
#include <vector>

#include "chorus/chorus.h"
#include "perf/chorus_perf/algorithm_comms.h"
#include "perf/chorus_perf/perf_options.h"
#include "perf/chorus_perf/perf_runner.h"

int main(int argc, char** argv) {
  using chorus::perf::ParseOutcome;
  const ParseOutcome parsed = chorus::perf::parsePerfArgs(argc, argv);
  if (parsed.action == ParseOutcome::Action::kHelp) {
    std::fputs(chorus::perf::perfUsage().c_str(), stdout);
    return 0;
  }
  if (parsed.action == ParseOutcome::Action::kError) {
    std::fprintf(stderr, "chorus-perf: %s\nTry 'chorus-perf -h' for the flags.\n", parsed.error.c_str());
    return 2;
  }

  chorusComm_t comm = nullptr;
  if (chorusResult_t r = chorusCommInitFromEnv(&comm); r != chorusSuccess) {
    std::fprintf(stderr, "chorus-perf: rank ?: chorusCommInitFromEnv failed: %s: %s\n", chorusGetErrorString(r),
                 chorusGetLastError(nullptr));
    return 1;
  }
  int rank = -1;
  int nranks = 0;
  for (auto [r, call] : {std::pair{chorusCommUserRank(comm, &rank), "chorusCommUserRank"},
                         std::pair{chorusCommCount(comm, &nranks), "chorusCommCount"}}) {
    if (r != chorusSuccess) {
      std::fprintf(stderr, "chorus-perf: rank %d: %s failed: %s: %s\n", rank, call, chorusGetErrorString(r),
                   chorusGetLastError(comm));
      chorusCommAbort(comm);
      return 1;
    }
  }

  int exitCode = 0;
  std::vector<chorusComm_t> comms;  // --algos: one communicator per algorithm, comm first
  if (!parsed.options.algos.empty()) {
    comms = chorus::perf::openAlgorithmComms(comm, rank, nranks, parsed.options.algos);
    if (comms.empty()) {
      chorusCommAbort(comm);  // the other ranks learn of it instead of waiting for their timeout
      return 1;
    }
  }
  {
    chorus::perf::PerfRunner runner(parsed.options, comm, rank, nranks, comms);
    exitCode = runner.run();
  }
  if (!chorus::perf::closeAlgorithmComms(comms, rank)) exitCode = 1;
  if (chorusResult_t r = chorusCommDestroy(comm); r != chorusSuccess) {
    std::fprintf(stderr, "chorus-perf: rank %d: chorusCommDestroy failed: %s: %s\n", rank, chorusGetErrorString(r),
                 chorusGetLastError(nullptr));
    return 1;
  }
  return exitCode;
}
