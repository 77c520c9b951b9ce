// chorus-window-bench [ROUNDS]: put/signal against send/recv between 2 ranks (threads of this process, each with
// its own communicator), over whichever transport CHORUS_TRANSPORT leaves (shared memory by default, or tcp).
// Latency: a ping-pong of 8 bytes (put + signal there, put + signal back; send, then receive back), half the round
// trip. Bandwidth: rank 0 moves SIZE bytes to rank 1, which answers with a bare signal (an 8-byte send), per
// iteration. Each round measures both ways back to back, alternating which goes first; prints medians of ROUNDS.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "chorus/chorus.h"

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

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

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 7;
  const std::vector<size_t> sizes = {8, 4096, 65536, 1 << 20, 16 << 20};
  chorusUniqueId id;
  if (chorusGetUniqueId(&id) != chorusSuccess) return 1;
  // results[size][0 put, 1 send][round]
  std::vector<std::vector<std::vector<double>>> results(sizes.size(), std::vector<std::vector<double>>(2));
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back([&, r] {
      chorusComm_t comm = nullptr;
      if (chorusCommInitRank(&comm, 2, id, r) != chorusSuccess) {
        std::fprintf(stderr, "rank %d: init: %s\n", r, chorusGetLastError(nullptr));
        std::exit(1);
      }
      std::vector<char> window(sizes.back()), buf(sizes.back(), 1);
      chorusWindow_t win = nullptr;
      ok(chorusCommWindowRegister(comm, window.data(), window.size(), &win, 0), comm, "register");
      for (size_t s = 0; s < sizes.size(); ++s) {
        const size_t bytes = sizes[s];
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
      chorusCommDestroy(comm);
    });
  }
  for (auto& t : ranks) t.join();
  const char* transport = std::getenv("CHORUS_TRANSPORT");
  std::printf("transport %s, medians of %d alternating rounds\n", transport && *transport ? transport : "default",
              rounds);
  std::printf("%10s  %14s  %14s  %12s  %12s\n", "bytes", "put us", "send us", "put GB/s", "send GB/s");
  for (size_t s = 0; s < sizes.size(); ++s) {
    const double p = median(results[s][0]), q = median(results[s][1]);
    std::printf("%10zu  %14.2f  %14.2f  %12.3f  %12.3f\n", sizes[s], p * 1e6, q * 1e6, sizes[s] / p / 1e9,
                sizes[s] / q / 1e9);
  }
  return 0;
}
