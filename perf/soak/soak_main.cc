// chorus-soak: thousands of random collectives, every result checked against an exact reference, with the
// resident memory at start, after warm-up and at the end. Run under a launcher, e.g.
//   chorusrun -n 4 chorus-soak --ops 10000
// Every rank draws the same sequence from --seed; the exit code is non-zero when any result was wrong.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "chorus/chorus.h"
#include "perf/soak/soak_ops.h"

namespace {

struct Options {
  uint64_t ops = 10000;
  uint64_t seed = 1;
  size_t maxBytes = 4 << 20;
  uint64_t warmup = 500;
};

void usage() {
  std::fprintf(stderr,
               "usage: chorus-soak [--ops N (10000)] [--seed S (1)] [--max-bytes B (4194304)] [--warmup W (500)]\n"
               "  runs N random verified collectives on every rank; prints ops, wrong results and resident memory\n");
}

bool parse(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "-h" || flag == "--help") return false;
    if (i + 1 >= argc) return false;
    char* end = nullptr;
    unsigned long long v = std::strtoull(argv[++i], &end, 10);
    if (*end != '\0') return false;
    if (flag == "--ops") {
      o->ops = v;
    } else if (flag == "--seed") {
      o->seed = v;
    } else if (flag == "--max-bytes") {
      o->maxBytes = v;
    } else if (flag == "--warmup") {
      o->warmup = v;
    } else {
      return false;
    }
  }
  return true;
}

// Resident set size in bytes, from /proc/self/statm (second field, in pages).
int64_t residentBytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return -1;
  long long size = 0, resident = 0;
  int got = std::fscanf(f, "%lld %lld", &size, &resident);
  std::fclose(f);
  return got == 2 ? resident * sysconf(_SC_PAGESIZE) : -1;
}

double mib(int64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!parse(argc, argv, &options)) {
    usage();
    return 2;
  }
  chorusComm_t comm = nullptr;
  if (chorusCommInitFromEnv(&comm) != chorusSuccess) {
    std::fprintf(stderr, "chorus-soak: init failed: %s\n", chorusGetLastError(nullptr));
    return 2;
  }
  int rank = 0, nranks = 0;
  chorusCommUserRank(comm, &rank);
  chorusCommCount(comm, &nranks);
  const int64_t rssStart = residentBytes();
  int64_t rssWarm = rssStart;
  chorus::soak::OpSequence sequence(options.seed, nranks, options.maxBytes);
  uint64_t done = 0, wrong = 0, bytesMoved = 0;
  uint64_t perKind[chorus::soak::kKinds] = {};
  const auto start = std::chrono::steady_clock::now();
  try {
    for (uint64_t i = 0; i < options.ops; ++i) {
      chorus::soak::SoakOp op = sequence.next();
      std::string problem = chorus::soak::runAndCheck(comm, rank, nranks, options.seed, op);
      if (!problem.empty()) {
        if (wrong < 20) std::fprintf(stderr, "chorus-soak: rank %d: WRONG %s\n", rank, problem.c_str());
        ++wrong;
      }
      ++done;
      ++perKind[static_cast<int>(op.kind)];
      bytesMoved += op.count * chorusTypeSize(op.type);
      if (done == options.warmup) rssWarm = residentBytes();
      if (rank == 0 && done % 1000 == 0) {
        std::printf("chorus-soak: %llu ops done, rss %.1f MiB\n", static_cast<unsigned long long>(done),
                    mib(residentBytes()));
        std::fflush(stdout);
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "chorus-soak: rank %d: %s\n", rank, e.what());
    chorusCommAbort(comm);
    return 2;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const int64_t rssEnd = residentBytes();
  // Every rank's figures, gathered with the library itself, then printed by rank 0.
  int64_t mine[5] = {static_cast<int64_t>(done), static_cast<int64_t>(wrong), rssStart, rssWarm, rssEnd};
  std::vector<int64_t> all(5 * static_cast<size_t>(nranks));
  if (chorusAllGather(mine, all.data(), 5, chorusInt64, comm, nullptr) != chorusSuccess) {
    std::fprintf(stderr, "chorus-soak: rank %d: gathering the results failed: %s\n", rank, chorusGetLastError(comm));
    return 2;
  }
  int64_t totalWrong = 0;
  for (int r = 0; r < nranks; ++r) totalWrong += all[5 * r + 1];
  if (rank == 0) {
    std::printf(
        "chorus-soak: %d ranks, seed %llu, %llu ops in %.1f s (allreduce %llu, broadcast %llu, reduce %llu, "
        "allgather %llu, reducescatter %llu), %.1f MiB of payload per rank\n",
        nranks, static_cast<unsigned long long>(options.seed), static_cast<unsigned long long>(done), seconds,
        static_cast<unsigned long long>(perKind[0]), static_cast<unsigned long long>(perKind[1]),
        static_cast<unsigned long long>(perKind[2]), static_cast<unsigned long long>(perKind[3]),
        static_cast<unsigned long long>(perKind[4]), mib(static_cast<int64_t>(bytesMoved)));
    std::printf("%6s %10s %8s %12s %14s %12s\n", "rank", "ops", "wrong", "rss start", "rss warmed up", "rss end");
    for (int r = 0; r < nranks; ++r) {
      const int64_t* f = &all[5 * r];
      std::printf("%6d %10lld %8lld %8.1f MiB %10.1f MiB %8.1f MiB\n", r, static_cast<long long>(f[0]),
                  static_cast<long long>(f[1]), mib(f[2]), mib(f[3]), mib(f[4]));
    }
    std::printf("chorus-soak: %s: %lld wrong results\n", totalWrong == 0 ? "PASS" : "FAIL",
                static_cast<long long>(totalWrong));
  }
  chorusCommDestroy(comm);
  return totalWrong == 0 ? 0 : 1;
}
