// A rank of the flight-recorder checks (inspect_check.py), through the public API only, launched with CHORUS_RANK,
// CHORUS_WORLD_SIZE, CHORUS_STORE and CHORUS_JOB_ID:
//   flight_worker stall K      a few allreduces and a broadcast; then rank K waits for a line on its stdin (the
//                              check holds it there), or on the FIFO FLIGHT_GATE names where the rank's stdin is
//                              not the check's (under chorusrun or chorus-lab), before the next allreduce, which the
//                              others are already in
//   flight_worker mismatch     as stall's start, then rank 1 calls a broadcast where the others call an allreduce
// Prints "rank R: done" or "rank R: failed: <error>"; exit status 0 done, 3 failed (with FLIGHT_HOLD=1, once its
// stdin ends).
#include <chorus/chorus.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>

namespace {

// With FLIGHT_HOLD=1 a failed rank stays up until its stdin ends, so that the check can inspect it after the failure.
int failed(int rank, chorusComm_t comm, chorusResult_t r) {
  std::printf("rank %d: failed: %s: %s\n", rank, chorusGetErrorString(r), chorusGetLastError(comm));
  std::fflush(stdout);
  const char* hold = std::getenv("FLIGHT_HOLD");
  if (hold != nullptr && std::strcmp(hold, "1") == 0) {
    std::string line;
    std::getline(std::cin, line);
  }
  return 3;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: flight_worker stall K | mismatch\n");
    return 2;
  }
  const std::string mode = argv[1];
  chorusComm_t comm;
  chorusResult_t r = chorusCommInitFromEnv(&comm);
  if (r != chorusSuccess) {
    std::fprintf(stderr, "init: %s\n", chorusGetLastError(nullptr));
    return 1;
  }
  int rank = 0;
  chorusCommUserRank(comm, &rank);
  double value[1] = {1.0};
  for (int i = 0; i < 5 && r == chorusSuccess; ++i) {
    r = chorusAllReduce(value, value, 1, chorusFloat64, chorusSum, comm, nullptr);
  }
  if (r == chorusSuccess) r = chorusBroadcast(value, value, 1, chorusFloat64, 0, comm, nullptr);
  if (r != chorusSuccess) return failed(rank, comm, r);
  if (mode == "stall" && argc > 2 && rank == std::atoi(argv[2])) {
    std::string line;
    const char* gate = std::getenv("FLIGHT_GATE");
    if (gate != nullptr && gate[0] != '\0') {
      std::ifstream fifo(gate);  // opening blocks until the check opens it for writing
      std::getline(fifo, line);
    } else {
      std::getline(std::cin, line);  // the check lets it go on (or kills it here)
    }
  }
  if (mode == "mismatch" && rank == 1) {
    r = chorusBroadcast(value, value, 1, chorusFloat64, 0, comm, nullptr);
  } else {
    r = chorusAllReduce(value, value, 1, chorusFloat64, chorusSum, comm, nullptr);
  }
  if (r != chorusSuccess) return failed(rank, comm, r);
  std::printf("rank %d: done\n", rank);
  std::fflush(stdout);
  chorusCommDestroy(comm);
  return 0;
}
