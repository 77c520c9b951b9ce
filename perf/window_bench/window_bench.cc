// chorus-window-bench [ROUNDS] [memalloc]: put/signal against send/recv between 2 ranks, over whichever transport
// CHORUS_TRANSPORT leaves (shared memory by default, tcp, or ib with CHORUS_IB_EMULATION=1): threads of this
// process, each with its own communicator, or, under a launcher (chorusrun -n 2: CHORUS_RANK set), one rank per
// process, where shared memory stores puts by process_vm_writev rather than a copy within one process.
// Latency: a ping-pong of 8 bytes (put + signal there, put + signal back; send, then receive back), half the round
// trip. Bandwidth: rank 0 moves SIZE bytes to rank 1, which answers with a bare signal (an 8-byte send), per
// iteration. Each round measures both ways back to back, alternating which goes first; prints medians of ROUNDS.
// "memalloc": the window is chorusMemAlloc memory (between processes of one host, puts are the sender's copy into
// the mapped window).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "chorus/chorus.h"
#include "round_stats.h"

namespace {

using Clock = std::chrono::steady_clock;

using window_bench::median;
using window_bench::spread;

bool ok(chorusResult_t r, chorusComm_t comm, const char* what) {
  if (r == chorusSuccess) return true;
  std::fprintf(stderr, "%s: %s\n", what, chorusGetLastError(comm));
  std::exit(1);
}

// Seconds per iteration of `iters` transfers of `bytes` from 0 to 1 and an 8-byte answer (or a ping-pong).
double timePut(chorusComm_t comm, int rank, chorusWindow_t win, std::vector<char>& buf, size_t bytes, int iters,
               bool pingPong) {
  const int peer = 1 - rank;
  chorusWaitSignalDesc_t d{.opCnt = 1, .peer = peer, .sigIdx = 0, .ctx = 0};
  ok(chorusBarrier(comm, nullptr), comm, "barrier");
  const auto a = Clock::now();
  for (int i = 0; i < iters; ++i) {
    if (rank == 0) {
      ok(chorusPutSignal(buf.data(), bytes, chorusUint8, 1, win, 0, 0, 0, 0, comm, nullptr), comm, "put");
      ok(chorusWaitSignal(1, &d, comm, nullptr), comm, "wait");
    } else {
      ok(chorusWaitSignal(1, &d, comm, nullptr), comm, "wait");
      if (pingPong) {
        ok(chorusPutSignal(buf.data(), bytes, chorusUint8, 0, win, 0, 0, 0, 0, comm, nullptr), comm, "put");
      } else {
        ok(chorusSignal(0, 0, 0, 0, comm, nullptr), comm, "signal");
      }
    }
  }
  return std::chrono::duration<double>(Clock::now() - a).count() / iters;
}

double timeSend(chorusComm_t comm, int rank, std::vector<char>& buf, size_t bytes, int iters, bool pingPong) {
  char ack[8] = {};
  ok(chorusBarrier(comm, nullptr), comm, "barrier");
  const auto a = Clock::now();
  for (int i = 0; i < iters; ++i) {
    if (rank == 0) {
      ok(chorusSend(buf.data(), bytes, chorusUint8, 1, comm, nullptr), comm, "send");
      ok(chorusRecv(pingPong ? buf.data() : ack, pingPong ? bytes : 8, chorusUint8, 1, comm, nullptr), comm, "recv");
    } else {
      ok(chorusRecv(buf.data(), bytes, chorusUint8, 0, comm, nullptr), comm, "recv");
      ok(chorusSend(pingPong ? buf.data() : ack, pingPong ? bytes : 8, chorusUint8, 0, comm, nullptr), comm, "send");
    }
  }
  return std::chrono::duration<double>(Clock::now() - a).count() / iters;
}

// results[size][0 put, 1 send][round], filled by rank 0.
using Results = std::vector<std::vector<std::vector<double>>>;

const std::vector<size_t> kSizes = {8, 4096, 65536, 1 << 20, 16 << 20};

void runRank(chorusComm_t comm, int r, int rounds, bool memAlloc, Results& results) {
  std::vector<char> plain, buf(kSizes.back(), 1);
  void* window = nullptr;
  if (memAlloc) {
    ok(chorusMemAlloc(&window, kSizes.back()), nullptr, "chorusMemAlloc");
  } else {
    plain.resize(kSizes.back());
    window = plain.data();
  }
  chorusWindow_t win = nullptr;
  ok(chorusCommWindowRegister(comm, window, kSizes.back(), &win, 0), comm, "register");
  for (size_t s = 0; s < kSizes.size(); ++s) {
    const size_t bytes = kSizes[s];
    const bool pingPong = bytes == 8;
    const int iters = std::max<int>(4, static_cast<int>((64u << 20) / std::max<size_t>(bytes, 32768)));
    timePut(comm, r, win, buf, bytes, 2, pingPong);  // warm-up
    timeSend(comm, r, buf, bytes, 2, pingPong);
    for (int round = 0; round < rounds; ++round) {
      double put, send;
      if (round % 2 == 0) {
        put = timePut(comm, r, win, buf, bytes, iters, pingPong);
        send = timeSend(comm, r, buf, bytes, iters, pingPong);
      } else {
        send = timeSend(comm, r, buf, bytes, iters, pingPong);
        put = timePut(comm, r, win, buf, bytes, iters, pingPong);
      }
      if (r == 0) {
        results[s][0].push_back(pingPong ? put / 2 : put);
        results[s][1].push_back(pingPong ? send / 2 : send);
      }
    }
  }
  ok(chorusCommWindowDeregister(comm, win), comm, "deregister");
  if (memAlloc) ok(chorusMemFree(window), nullptr, "chorusMemFree");
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 7;
  const bool memAlloc = argc > 2 && std::string(argv[2]) == "memalloc";
  Results results(kSizes.size(), std::vector<std::vector<double>>(2));
  const bool launched = std::getenv("CHORUS_RANK") != nullptr;
  int myRank = 0;
  if (launched) {
    chorusComm_t comm = nullptr;
    if (chorusCommInitFromEnv(&comm) != chorusSuccess) {
      std::fprintf(stderr, "init: %s\n", chorusGetLastError(nullptr));
      return 1;
    }
    int n = 0;
    chorusCommUserRank(comm, &myRank);
    chorusCommCount(comm, &n);
    if (n != 2) {
      std::fprintf(stderr, "chorus-window-bench runs 2 ranks, not %d\n", n);
      return 1;
    }
    runRank(comm, myRank, rounds, memAlloc, results);
    chorusCommDestroy(comm);
  } else {
    chorusUniqueId id;
    if (chorusGetUniqueId(&id) != chorusSuccess) return 1;
    std::vector<std::thread> ranks;
    for (int r = 0; r < 2; ++r) {
      ranks.emplace_back([&, r] {
        chorusComm_t comm = nullptr;
        if (chorusCommInitRank(&comm, 2, id, r) != chorusSuccess) {
          std::fprintf(stderr, "rank %d: init: %s\n", r, chorusGetLastError(nullptr));
          std::exit(1);
        }
        runRank(comm, r, rounds, memAlloc, results);
        chorusCommDestroy(comm);
      });
    }
    for (auto& t : ranks) t.join();
  }
  if (myRank != 0) return 0;
  const char* transport = std::getenv("CHORUS_TRANSPORT");
  std::printf("transport %s, %s, %s window, medians of %d alternating rounds (spread: (max - min) / median)\n",
              transport && *transport ? transport : "default", launched ? "one rank per process" : "ranks as threads",
              memAlloc ? "chorusMemAlloc" : "plain", rounds);
  std::printf("%10s  %10s  %10s  %8s  %8s  %10s  %10s\n", "bytes", "put us", "send us", "put +-%", "send +-%",
              "put GB/s", "send GB/s");
  for (size_t s = 0; s < kSizes.size(); ++s) {
    const double p = median(results[s][0]), q = median(results[s][1]);
    std::printf("%10zu  %10.2f  %10.2f  %8.0f  %8.0f  %10.3f  %10.3f\n", kSizes[s], p * 1e6, q * 1e6,
                spread(results[s][0]), spread(results[s][1]), kSizes[s] / p / 1e9, kSizes[s] / q / 1e9);
  }
  return 0;
}
