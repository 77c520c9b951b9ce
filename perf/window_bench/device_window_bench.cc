// chorus-device-window-bench [ROUNDS]: put/signal against send/recv on device buffers and a CUDA stream between 2
// ranks (windows of device memory over CUDA IPC: docs/windows.md), on a GPU or on the emulated device
// (CHORUS_DEVICE_EMULATION=1). Ranks are threads of this process (peers use each other's pointers) or, under a
// launcher (chorusrun -n 2), processes (peers open each other's windows by CUDA IPC).
// Latency: a ping-pong of 8 bytes (put + signal there and back; send, then receive back), half the round trip.
// 1 MiB: rank 0 moves the bytes to rank 1, which answers with a bare signal (an 8-byte send). Everything is
// enqueued on the rank's stream; an iteration's time is the enqueueing plus the stream's run (synchronized at the
// end of each batch). Each round measures both back to back, alternating which goes first; prints medians.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "chorus/chorus.h"
#include "device/device_api.h"
#include "round_stats.h"

namespace {

using Clock = std::chrono::steady_clock;

using window_bench::median;
using window_bench::spread;

void ok(chorusResult_t r, chorusComm_t comm, const char* what) {
  if (r == chorusSuccess) return;
  std::fprintf(stderr, "%s: %s\n", what, chorusGetLastError(comm));
  std::exit(1);
}

struct Rank {
  chorusComm_t comm;
  int rank;
  chorus::DeviceApi* api;
  chorus::DeviceStream stream;
  chorusStream_t cs() const { return static_cast<chorusStream_t>(stream); }
};

double timePut(Rank& w, chorusWindow_t win, void* buf, size_t bytes, int iters, bool pingPong) {
  const int peer = 1 - w.rank;
  chorusWaitSignalDesc_t d{.opCnt = 1, .peer = peer, .sigIdx = 0, .ctx = 0};
  ok(chorusBarrier(w.comm, nullptr), w.comm, "barrier");
  const auto a = Clock::now();
  for (int i = 0; i < iters; ++i) {
    if (w.rank == 0) {
      ok(chorusPutSignal(buf, bytes, chorusUint8, 1, win, 0, 0, 0, 0, w.comm, w.cs()), w.comm, "put");
      ok(chorusWaitSignal(1, &d, w.comm, w.cs()), w.comm, "wait");
    } else {
      ok(chorusWaitSignal(1, &d, w.comm, w.cs()), w.comm, "wait");
      if (pingPong) {
        ok(chorusPutSignal(buf, bytes, chorusUint8, 0, win, 0, 0, 0, 0, w.comm, w.cs()), w.comm, "put");
      } else {
        ok(chorusSignal(0, 0, 0, 0, w.comm, w.cs()), w.comm, "signal");
      }
    }
  }
  w.api->synchronize(w.stream);
  return std::chrono::duration<double>(Clock::now() - a).count() / iters;
}

double timeSend(Rank& w, void* buf, void* ack, size_t bytes, int iters, bool pingPong) {
  ok(chorusBarrier(w.comm, nullptr), w.comm, "barrier");
  const auto a = Clock::now();
  for (int i = 0; i < iters; ++i) {
    if (w.rank == 0) {
      ok(chorusSend(buf, bytes, chorusUint8, 1, w.comm, w.cs()), w.comm, "send");
      ok(chorusRecv(pingPong ? buf : ack, pingPong ? bytes : 8, chorusUint8, 1, w.comm, w.cs()), w.comm, "recv");
    } else {
      ok(chorusRecv(buf, bytes, chorusUint8, 0, w.comm, w.cs()), w.comm, "recv");
      ok(chorusSend(pingPong ? buf : ack, pingPong ? bytes : 8, chorusUint8, 0, w.comm, w.cs()), w.comm, "send");
    }
  }
  w.api->synchronize(w.stream);
  return std::chrono::duration<double>(Clock::now() - a).count() / iters;
}

using Results = std::vector<std::vector<std::vector<double>>>;  // [size][0 put, 1 send][round], rank 0's

const std::vector<size_t> kSizes = {8, 1 << 20};

void runRank(chorusComm_t comm, int r, int rounds, Results& results) {
  Rank w{comm, r, &chorus::deviceApi(), nullptr};
  w.stream = w.api->createStream();
  void* window = w.api->deviceAlloc(kSizes.back());
  void* buf = w.api->deviceAlloc(kSizes.back());
  void* ack = w.api->deviceAlloc(8);
  chorusWindow_t win = nullptr;
  ok(chorusCommWindowRegister(comm, window, kSizes.back(), &win, 0), comm, "register");
  for (size_t s = 0; s < kSizes.size(); ++s) {
    const size_t bytes = kSizes[s];
    const bool pingPong = bytes == 8;
    const int iters = pingPong ? 200 : 20;
    timePut(w, win, buf, bytes, 2, pingPong);  // warm-up
    timeSend(w, buf, ack, bytes, 2, pingPong);
    for (int round = 0; round < rounds; ++round) {
      double put, send;
      if (round % 2 == 0) {
        put = timePut(w, win, buf, bytes, iters, pingPong);
        send = timeSend(w, buf, ack, bytes, iters, pingPong);
      } else {
        send = timeSend(w, buf, ack, bytes, iters, pingPong);
        put = timePut(w, win, buf, bytes, iters, pingPong);
      }
      if (r == 0) {
        results[s][0].push_back(pingPong ? put / 2 : put);
        results[s][1].push_back(pingPong ? send / 2 : send);
      }
    }
  }
  ok(chorusCommWindowDeregister(comm, win), comm, "deregister");
  w.api->synchronize(w.stream);
  w.api->deviceFree(ack);
  w.api->deviceFree(buf);
  w.api->deviceFree(window);
  w.api->destroyStream(w.stream);
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 7;
  if (!chorus::deviceApi().available()) {
    std::fprintf(stderr, "no device: run on a GPU, or with CHORUS_DEVICE_EMULATION=1\n");
    return 1;
  }
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
      std::fprintf(stderr, "chorus-device-window-bench runs 2 ranks, not %d\n", n);
      return 1;
    }
    runRank(comm, myRank, rounds, results);
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
        runRank(comm, r, rounds, results);
        chorusCommDestroy(comm);
      });
    }
    for (auto& t : ranks) t.join();
  }
  if (myRank != 0) return 0;
  std::printf("device %s, %s, medians of %d alternating rounds (spread: (max - min) / median)\n",
              chorus::deviceApi().name(), launched ? "one rank per process" : "ranks as threads", rounds);
  std::printf("%10s  %10s  %10s  %8s  %8s  %10s  %10s\n", "bytes", "put us", "send us", "put +-%", "send +-%",
              "put GB/s", "send GB/s");
  for (size_t s = 0; s < kSizes.size(); ++s) {
    const double p = median(results[s][0]), q = median(results[s][1]);
    std::printf("%10zu  %10.2f  %10.2f  %8.0f  %8.0f  %10.3f  %10.3f\n", kSizes[s], p * 1e6, q * 1e6,
                spread(results[s][0]), spread(results[s][1]), kSizes[s] / p / 1e9, kSizes[s] / q / 1e9);
  }
  return 0;
}
