// chorus_collective_worker SCENARIO: one rank of a process world (tests/harness/process_world.h). Joins the world
// from CHORUS_* (chorusCommInitFromEnv), runs the scenario's cases, prints what was wrong, and exits 0 only when
// every call succeeded and every result was right. Uses nothing but the public C API (libchorus.so).
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "chorus/chorus.h"
#include "tests/collectives/case_matrix.h"
#include "tests/collectives/emulated_hosts.h"

namespace {

using chorus::test::CaseGrid;
using chorus::test::CollectiveCase;
using chorus::test::CollectiveKind;
using chorus::test::emulateHosts;

constexpr int kFailuresShown = 12;

// The cases of a correctness scenario; false when `name` is not one.
bool casesFor(const std::string& name, int nranks, std::vector<CollectiveCase>* cases) {
  CaseGrid grid;
  grid.types = {chorusFloat32};
  grid.roots = chorus::test::rootsFor(nranks);
  if (name == "allreduce_sum") {
    grid.kind = CollectiveKind::kAllReduce;
    grid.types = chorus::test::allTypes();
    grid.ops = {chorusSum};
  } else if (name == "broadcast") {
    grid.kind = CollectiveKind::kBroadcast;
  } else if (name == "reduce") {
    grid.kind = CollectiveKind::kReduce;
  } else if (name == "allgather") {
    grid.kind = CollectiveKind::kAllGather;
  } else if (name == "reducescatter") {
    grid.kind = CollectiveKind::kReduceScatter;
  } else if (name == "framework_calls") {
    // Alltoall(v), gather, scatter and a grouped send/receive ring, across the world shapes of the two-level tests.
    for (CollectiveKind kind : {CollectiveKind::kAllToAll, CollectiveKind::kAllToAllv, CollectiveKind::kGather,
                                CollectiveKind::kScatter, CollectiveKind::kSendRecv}) {
      grid.kind = kind;
      grid.types = {chorusInt8, chorusFloat16, chorusFloat64};
      grid.counts = {0, 1, 1031, 20000};
      std::vector<CollectiveCase> some = chorus::test::casesOf(grid, static_cast<uint32_t>(cases->size() + 1));
      cases->insert(cases->end(), some.begin(), some.end());
    }
    return true;
  } else if (name == "every_collective") {
    // Each collective and framework call once per count, on a grid small enough for many transports and shapes.
    for (CollectiveKind kind : {CollectiveKind::kAllReduce, CollectiveKind::kBroadcast, CollectiveKind::kReduce,
                                CollectiveKind::kAllGather, CollectiveKind::kReduceScatter, CollectiveKind::kAllToAll,
                                CollectiveKind::kAllToAllv, CollectiveKind::kGather, CollectiveKind::kScatter,
                                CollectiveKind::kSendRecv}) {
      grid.kind = kind;
      grid.types = {chorusInt32, chorusFloat16};
      grid.ops = {chorusSum, chorusMax};
      grid.counts = {0, 1, 1031, 70000};
      std::vector<CollectiveCase> some = chorus::test::casesOf(grid, static_cast<uint32_t>(cases->size() + 1));
      cases->insert(cases->end(), some.begin(), some.end());
    }
    return true;
  } else if (name == "rooted_and_allreduce") {
    // The collectives two-level algorithms implement, on a grid small enough for many world shapes.
    for (CollectiveKind kind : {CollectiveKind::kAllReduce, CollectiveKind::kBroadcast, CollectiveKind::kReduce}) {
      grid.kind = kind;
      grid.types = {chorusInt32, chorusFloat16, chorusFloat64};
      grid.ops = {chorusSum, chorusMax, chorusAvg};
      grid.counts = {0, 1, 1031, 20000};
      std::vector<CollectiveCase> some = chorus::test::casesOf(grid, static_cast<uint32_t>(cases->size() + 1));
      cases->insert(cases->end(), some.begin(), some.end());
    }
    return true;
  } else {
    return false;
  }
  *cases = chorus::test::casesOf(grid);
  return true;
}

// Right after init (every connection is up then), rank 1 vanishes without a goodbye (as a crash would) while the
// others call a large allreduce: each of them must get an error soon, and exits kPeerLossNoticed. (Rank 1 does not
// make a call first: a peer may still be reading that call's last bytes when rank 1's hang-up arrives.)
constexpr int kPeerLossNoticed = 7;
int rankOneDiesMidCall(chorusComm_t comm, int rank) {
  if (rank == 1) {
    std::printf("rank 1: exiting without a goodbye, on purpose\n");
    std::fflush(stdout);
    ::_exit(5);
  }
  std::vector<float> data(1 << 20, 1.0f);
  chorusResult_t r = chorusAllReduce(data.data(), data.data(), data.size(), chorusFloat32, chorusSum, comm, nullptr);
  if (r == chorusSuccess) {
    std::printf("rank %d: the allreduce without rank 1 succeeded\n", rank);
    return 1;
  }
  chorusResult_t async = chorusSuccess;
  chorusCommGetAsyncError(comm, &async);
  std::printf("rank %d: allreduce returned %s (async error %s): %s\n", rank, chorusGetErrorString(r),
              chorusGetErrorString(async), chorusGetLastError(comm));
  chorusCommDestroy(comm);
  return kPeerLossNoticed;
}

int fail(const char* what, chorusResult_t r) {
  std::printf("%s failed: %s: %s\n", what, chorusGetErrorString(r), chorusGetLastError(nullptr));
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s SCENARIO\n", argv[0]);
    return 2;
  }
  const std::string scenario = argv[1];
  const char* rankText = std::getenv("CHORUS_RANK");
  const int envRank = rankText ? std::atoi(rankText) : -1;
  // Harness checks: a rank that dies before joining, and a world that hangs.
  if (scenario == "rank1_exits_early" && envRank == 1) {
    std::printf("rank 1: exiting with status 3 before joining, on purpose\n");
    return 3;
  }
  const char* sizeText = std::getenv("CHORUS_WORLD_SIZE");
  emulateHosts(envRank, sizeText ? std::atoi(sizeText) : 0);
  chorusComm_t comm = nullptr;
  chorusResult_t r = chorusCommInitFromEnv(&comm);
  if (r != chorusSuccess) return fail("chorusCommInitFromEnv", r);
  int rank = -1, nranks = 0;
  chorusCommUserRank(comm, &rank);
  chorusCommCount(comm, &nranks);
  if (scenario == "rank1_exits_early" || scenario == "rank0_hangs") {
    if (rank == 0 && scenario == "rank0_hangs") {
      std::printf("rank 0: blocking forever, on purpose\n");
      std::fflush(stdout);
      for (;;) ::pause();
    }
    float x = 1;
    r = chorusAllReduce(&x, &x, 1, chorusFloat32, chorusSum, comm, nullptr);
    std::printf("rank %d: allreduce returned %s (the harness should have killed this rank first)\n", rank,
                chorusGetErrorString(r));
    return 1;
  }
  if (scenario == "rank1_dies_mid_call") return rankOneDiesMidCall(comm, rank);
  std::vector<CollectiveCase> cases;
  if (!casesFor(scenario, nranks, &cases)) {
    std::printf("rank %d: unknown scenario '%s'\n", rank, scenario.c_str());
    chorusCommDestroy(comm);
    return 2;
  }
  int failures = 0;
  for (const CollectiveCase& c : cases) {
    chorus::test::CaseOutcome outcome = chorus::test::runCase(comm, rank, nranks, c);
    if (outcome.problem.empty()) continue;
    std::printf("%s\n", outcome.problem.c_str());
    ++failures;
    if (outcome.callFailed || failures >= kFailuresShown) break;
  }
  chorusCommDestroy(comm);
  if (failures == 0 && cases.size() > 0) {
    std::printf("rank %d: %s: %zu calls right\n", rank, scenario.c_str(), cases.size());
    return 0;
  }
  return 1;
}
