// chorus_window_worker: one rank of a process world running the window checks (chorus.h's put and signal) over
// whichever transport CHORUS_TRANSPORT names: puts into every rank's window at once, a large put landing while its
// target sits in a receive (progress outside chorusWaitSignal), and an MoE-style dispatch and combine with uneven
// counts and a pipeline hand-off, each checked against the two-sided calls; 64 puts then one signal; a flushed put
// larger than the emulated adapter's largest message. With
// CHORUS_WINDOW_WORKER_MEMALLOC=1 the windows are chorusMemAlloc memory, and a put must land in a target busy
// outside the library. Prints "N checks right" and exits 0 only when every call succeeded and every byte was right.
// Uses only the public C API.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "chorus/chorus.h"
#include "tests/collectives/emulated_hosts.h"
#include "tests/collectives/window_memory.h"

using chorus::test::WindowVector;

namespace {

int rank = -1, nranks = 0;
chorusComm_t comm = nullptr;

#define CHECK_CALL(call)                                                                                               \
  do {                                                                                                                 \
    chorusResult_t r_ = (call);                                                                                        \
    if (r_ != chorusSuccess) {                                                                                         \
      std::printf("rank %d: %s failed: %s: %s\n", rank, #call, chorusGetErrorString(r_), chorusGetLastError(nullptr)); \
      return false;                                                                                                    \
    }                                                                                                                  \
  } while (0)

#define CHECK_THAT(cond, ...)         \
  do {                                \
    if (!(cond)) {                    \
      std::printf("rank %d: ", rank); \
      std::printf(__VA_ARGS__);       \
      std::printf("\n");              \
      return false;                   \
    }                                 \
  } while (0)

uint8_t byteOf(int from, int to, size_t i) { return static_cast<uint8_t>(from * 31 + to * 7 + i * 13 + (i >> 8)); }

// Every rank puts a block (its size depending on the target) into every rank's window at once, signals on index 0;
// no rank waits for another before putting: the puts' own progress lands what the others put meanwhile.
bool allToAllPuts() {
  const size_t block = 4096 + 24 * static_cast<size_t>(rank);
  WindowVector<uint8_t> mine(block * static_cast<size_t>(nranks) + 17, 0);
  chorusWindow_t win = nullptr;
  CHECK_CALL(chorusCommWindowRegister(comm, mine.data(), mine.size(), &win, CHORUS_WIN_DEFAULT));
  for (int k = 0; k < nranks; ++k) {
    const int to = (rank + k) % nranks;
    const size_t b = 4096 + 24 * static_cast<size_t>(to);
    std::vector<uint8_t> out(b);
    for (size_t i = 0; i < b; ++i) out[i] = byteOf(rank, to, i);
    CHECK_CALL(
        chorusPutSignal(out.data(), b, chorusUint8, to, win, b * static_cast<size_t>(rank), 0, 0, 0, comm, nullptr));
  }
  std::vector<chorusWaitSignalDesc_t> waits;
  for (int from = 0; from < nranks; ++from) waits.push_back({.opCnt = 1, .peer = from, .sigIdx = 0, .ctx = 0});
  CHECK_CALL(chorusWaitSignal(nranks, waits.data(), comm, nullptr));
  for (int from = 0; from < nranks; ++from) {
    for (size_t i = 0; i < block; ++i) {
      CHECK_THAT(mine[block * static_cast<size_t>(from) + i] == byteOf(from, rank, i), "byte %zu from %d", i, from);
    }
  }
  for (size_t i = block * static_cast<size_t>(nranks); i < mine.size(); ++i) CHECK_THAT(mine[i] == 0, "tail");
  CHECK_CALL(chorusCommWindowDeregister(comm, win));
  return true;
}

// Rank r puts 8 MiB into rank r+1 (a ring), then sends it a token; rank r+1 first receives the token and waits for
// the signal only after it. Over a message path the put completes only once the target has taken its bytes, which
// it does while inside chorusRecv: progress lands puts in any call, not only in chorusWaitSignal.
bool putLandsWhileTargetReceives() {
  if (nranks < 2) return true;
  constexpr size_t kBytes = 8 << 20;
  WindowVector<uint8_t> mine(kBytes, 0);
  std::vector<uint8_t> out(kBytes);
  const int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
  for (size_t i = 0; i < kBytes; ++i) out[i] = byteOf(rank, next, i);
  chorusWindow_t win = nullptr;
  CHECK_CALL(chorusCommWindowRegister(comm, mine.data(), mine.size(), &win, 0));
  int token = rank, got = -1;
  // Even ranks put first; odd ranks receive first: every put's target is inside a receive while it lands.
  if (rank % 2 == 0 || nranks % 2 == 1) {
    CHECK_CALL(chorusPutSignal(out.data(), kBytes, chorusUint8, next, win, 0, 4, 2, 0, comm, nullptr));
    CHECK_CALL(chorusGroupStart());
    CHECK_CALL(chorusSend(&token, 1, chorusInt32, next, comm, nullptr));
    CHECK_CALL(chorusRecv(&got, 1, chorusInt32, prev, comm, nullptr));
    CHECK_CALL(chorusGroupEnd());
  } else {
    CHECK_CALL(chorusRecv(&got, 1, chorusInt32, prev, comm, nullptr));
    CHECK_CALL(chorusPutSignal(out.data(), kBytes, chorusUint8, next, win, 0, 4, 2, 0, comm, nullptr));
    CHECK_CALL(chorusSend(&token, 1, chorusInt32, next, comm, nullptr));
  }
  CHECK_THAT(got == prev, "token %d from %d", got, prev);
  chorusWaitSignalDesc_t d{.opCnt = 1, .peer = prev, .sigIdx = 4, .ctx = 2};
  CHECK_CALL(chorusWaitSignal(1, &d, comm, nullptr));
  for (size_t i = 0; i < kBytes; ++i) CHECK_THAT(mine[i] == byteOf(prev, rank, i), "byte %zu of 8 MiB", i);
  CHECK_CALL(chorusCommWindowDeregister(comm, win));
  return true;
}

// MoE dispatch and combine with uneven counts: rank r sends count(r, j) tokens to expert j by put into j's window
// (at the displacement j's counts give), the expert transforms them and puts the results back into the origin's
// window at the origin's send displacement; the same round trip by two chorusAllToAllv calls must agree.
bool moeDispatchCombine() {
  auto count = [](int from, int to) { return static_cast<size_t>((from * 7 + to * 13) % 5 * 700 + to + 1); };
  const size_t n = static_cast<size_t>(nranks);
  std::vector<size_t> sc(n), sd(n), rc(n), rd(n);
  size_t st = 0, rt = 0;
  for (size_t j = 0; j < n; ++j) {
    sc[j] = count(rank, static_cast<int>(j)), sd[j] = st, st += sc[j];
    rc[j] = count(static_cast<int>(j), rank), rd[j] = rt, rt += rc[j];
  }
  std::vector<float> tokens(st);
  for (size_t j = 0; j < n; ++j) {
    for (size_t i = 0; i < sc[j]; ++i) tokens[sd[j] + i] = static_cast<float>(rank * 1000 + j * 100) + 0.25f * i;
  }
  auto expert = [&](auto& x) {
    for (float& v : x) v = v * 2.0f + static_cast<float>(rank);
  };
  // Two-sided reference.
  std::vector<float> atExpert(rt), back(st);
  CHECK_CALL(chorusAllToAllv(tokens.data(), sc.data(), sd.data(), atExpert.data(), rc.data(), rd.data(), chorusFloat32,
                             comm, nullptr));
  expert(atExpert);
  CHECK_CALL(chorusAllToAllv(atExpert.data(), rc.data(), rd.data(), back.data(), sc.data(), sd.data(), chorusFloat32,
                             comm, nullptr));
  // One-sided: an inbox window for dispatch, an outbox window for combine.
  WindowVector<float> inbox(rt, -1.0f), combined(st, -1.0f);
  chorusWindow_t inWin = nullptr, outWin = nullptr;
  CHECK_CALL(chorusCommWindowRegister(comm, inbox.data(), rt * sizeof(float), &inWin, 0));
  CHECK_CALL(chorusCommWindowRegister(comm, combined.data(), st * sizeof(float), &outWin, 0));
  for (size_t k = 0; k < n; ++k) {
    const int j = static_cast<int>((static_cast<size_t>(rank) + k) % n);
    size_t off = 0;  // expert j's receive displacement for this rank
    for (int q = 0; q < rank; ++q) off += count(q, j);
    CHECK_CALL(chorusPutSignal(tokens.data() + sd[static_cast<size_t>(j)], sc[static_cast<size_t>(j)], chorusFloat32, j,
                               inWin, off * sizeof(float), 1, 0, 0, comm, nullptr));
  }
  std::vector<chorusWaitSignalDesc_t> waits;
  for (int q = 0; q < nranks; ++q) waits.push_back({.opCnt = 1, .peer = q, .sigIdx = 1, .ctx = 0});
  CHECK_CALL(chorusWaitSignal(nranks, waits.data(), comm, nullptr));
  expert(inbox);
  for (size_t k = 0; k < n; ++k) {
    const int q = static_cast<int>((static_cast<size_t>(rank) + k) % n);
    size_t off = 0;  // origin q's send displacement for this expert
    for (int j = 0; j < rank; ++j) off += count(q, j);
    CHECK_CALL(chorusPutSignal(inbox.data() + rd[static_cast<size_t>(q)], rc[static_cast<size_t>(q)], chorusFloat32, q,
                               outWin, off * sizeof(float), 2, 0, 0, comm, nullptr));
  }
  for (auto& w : waits) w.sigIdx = 2;
  CHECK_CALL(chorusWaitSignal(nranks, waits.data(), comm, nullptr));
  CHECK_THAT(std::equal(combined.begin(), combined.end(), back.begin(), back.end()),
             "combine differs from the alltoallv round trip");
  CHECK_CALL(chorusCommWindowDeregister(comm, outWin));
  CHECK_CALL(chorusCommWindowDeregister(comm, inWin));
  return true;
}

// Pipeline stages: stage r takes micro-batches from r - 1 by put/signal and by send/recv, transforms both and hands
// them on; the last stage compares.
bool pipelineHandOff() {
  constexpr size_t kCount = 40000;
  constexpr int kMicro = 4;
  WindowVector<float> inbox(kCount * kMicro);
  chorusWindow_t win = nullptr;
  CHECK_CALL(chorusCommWindowRegister(comm, inbox.data(), inbox.size() * sizeof(float), &win, 0));
  auto stage = [&](std::vector<float>& x) {
    for (size_t i = 0; i < x.size(); ++i) x[i] = x[i] * 0.5f + static_cast<float>(rank + i % 11);
  };
  for (int m = 0; m < kMicro; ++m) {
    std::vector<float> a(kCount), b(kCount);
    if (rank == 0) {
      for (size_t i = 0; i < kCount; ++i) a[i] = b[i] = static_cast<float>(m * 3 + static_cast<int>(i % 101));
    } else {
      // The receive first: the put that precedes the send lands meanwhile.
      CHECK_CALL(chorusRecv(b.data(), kCount, chorusFloat32, rank - 1, comm, nullptr));
      chorusWaitSignalDesc_t d{.opCnt = 1, .peer = rank - 1, .sigIdx = 0, .ctx = 0};
      CHECK_CALL(chorusWaitSignal(1, &d, comm, nullptr));
      std::memcpy(a.data(), inbox.data() + m * kCount, kCount * sizeof(float));
    }
    stage(a);
    stage(b);
    if (rank + 1 < nranks) {
      CHECK_CALL(chorusPutSignal(a.data(), kCount, chorusFloat32, rank + 1, win, m * kCount * sizeof(float), 0, 0, 0,
                                 comm, nullptr));
      CHECK_CALL(chorusSend(b.data(), kCount, chorusFloat32, rank + 1, comm, nullptr));
    } else {
      CHECK_THAT(a == b, "micro-batch %d differs", m);
    }
  }
  CHECK_CALL(chorusCommWindowDeregister(comm, win));
  return true;
}

// 64 puts of 1 byte to 40 KiB at increasing offsets into the next rank's window, each raising (5, 1), two of them
// raising a signal whose index or context does not fit an ib immediate ((1 << 21, 0) and (0, 2000): frames behind
// RDMA writes), then one chorusSignal (6, 0). The target waits for that one signal only and finds every byte in
// place (a signal follows every put before it to that peer, whichever way each travelled), then consumes the rest.
bool manyPutsThenOneSignal() {
  if (nranks < 2) return true;
  constexpr int kPuts = 64;
  const int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
  auto bytesOf = [](int i) { return static_cast<size_t>(i % 8 == 0 ? 40000 + i : 1 + i * 13); };
  std::vector<size_t> offsets;
  size_t total = 0;
  for (int i = 0; i < kPuts; ++i) offsets.push_back(total), total += bytesOf(i);
  WindowVector<uint8_t> mine(total + 64, 0);
  std::vector<uint8_t> out(total);
  for (size_t i = 0; i < total; ++i) out[i] = byteOf(rank, next, i);
  chorusWindow_t win = nullptr;
  CHECK_CALL(chorusCommWindowRegister(comm, mine.data(), mine.size(), &win, 0));
  for (int i = 0; i < kPuts; ++i) {
    const int sigIdx = i == 20 ? 1 << 21 : i == 40 ? 0 : 5, ctx = i == 20 ? 0 : i == 40 ? 2000 : 1;
    CHECK_CALL(chorusPutSignal(out.data() + offsets[i], bytesOf(i), chorusUint8, next, win, offsets[i], sigIdx, ctx, 0,
                               comm, nullptr));
  }
  CHECK_CALL(chorusSignal(next, 6, 0, 0, comm, nullptr));
  chorusWaitSignalDesc_t one{.opCnt = 1, .peer = prev, .sigIdx = 6, .ctx = 0};
  CHECK_CALL(chorusWaitSignal(1, &one, comm, nullptr));
  for (size_t i = 0; i < total; ++i) CHECK_THAT(mine[i] == byteOf(prev, rank, i), "byte %zu of 64 puts", i);
  for (size_t i = total; i < mine.size(); ++i) CHECK_THAT(mine[i] == 0, "past the 64 puts");
  chorusWaitSignalDesc_t rest[3] = {{.opCnt = kPuts - 2, .peer = prev, .sigIdx = 5, .ctx = 1},
                                    {.opCnt = 1, .peer = prev, .sigIdx = 1 << 21, .ctx = 0},
                                    {.opCnt = 1, .peer = prev, .sigIdx = 0, .ctx = 2000}};
  CHECK_CALL(chorusWaitSignal(3, rest, comm, nullptr));
  CHECK_CALL(chorusCommWindowDeregister(comm, win));
  return true;
}

// A put of 9 MiB + 333 bytes at an odd offset (larger than the software verbs device's largest message, 4 MiB: the
// ib path splits it into writes), then chorusWindowFlush and a token by send. Over ib the flush returns once the
// target's adapter has placed the bytes, so the target finds them in place as soon as the token is in, before it
// takes the signal; elsewhere it checks after the signal.
bool flushedLargePut() {
  if (nranks < 2) return true;
  constexpr size_t kBytes = (9 << 20) + 333, kOffset = 4099;
  const char* transport = std::getenv("CHORUS_TRANSPORT");
  const bool ib = transport && std::string(transport) == "ib";
  const int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
  WindowVector<uint8_t> mine(kOffset + kBytes + 64, 0);
  std::vector<uint8_t> out(kBytes);
  for (size_t i = 0; i < kBytes; ++i) out[i] = byteOf(rank, next, i);
  chorusWindow_t win = nullptr;
  CHECK_CALL(chorusCommWindowRegister(comm, mine.data(), mine.size(), &win, 0));
  int token = rank, got = -1;
  if (rank % 2 == 0 || nranks % 2 == 1) {
    CHECK_CALL(chorusPutSignal(out.data(), kBytes, chorusUint8, next, win, kOffset, 7, 3, 0, comm, nullptr));
    CHECK_CALL(chorusWindowFlush(comm, win));
    CHECK_CALL(chorusGroupStart());
    CHECK_CALL(chorusSend(&token, 1, chorusInt32, next, comm, nullptr));
    CHECK_CALL(chorusRecv(&got, 1, chorusInt32, prev, comm, nullptr));
    CHECK_CALL(chorusGroupEnd());
  } else {
    CHECK_CALL(chorusRecv(&got, 1, chorusInt32, prev, comm, nullptr));
    CHECK_CALL(chorusPutSignal(out.data(), kBytes, chorusUint8, next, win, kOffset, 7, 3, 0, comm, nullptr));
    CHECK_CALL(chorusWindowFlush(comm, win));
    CHECK_CALL(chorusSend(&token, 1, chorusInt32, next, comm, nullptr));
  }
  CHECK_THAT(got == prev, "token %d from %d", got, prev);
  for (int pass = ib ? 0 : 1; pass < 2; ++pass) {
    if (pass == 1) {
      chorusWaitSignalDesc_t d{.opCnt = 1, .peer = prev, .sigIdx = 7, .ctx = 3};
      CHECK_CALL(chorusWaitSignal(1, &d, comm, nullptr));
    }
    for (size_t i = 0; i < kBytes; ++i) {
      CHECK_THAT(mine[kOffset + i] == byteOf(prev, rank, i), "byte %zu of the flushed put (%s its signal)", i,
                 pass == 0 ? "before" : "after");
    }
  }
  for (size_t i = 0; i < kOffset; ++i) CHECK_THAT(mine[i] == 0, "before the flushed put");
  for (size_t i = kOffset + kBytes; i < mine.size(); ++i) CHECK_THAT(mine[i] == 0, "after the flushed put");
  CHECK_CALL(chorusCommWindowDeregister(comm, win));
  return true;
}

// chorusMemAlloc windows only: rank 0 puts 1 MiB, then an 8-byte flag, into rank 1's window while rank 1 sits outside
// the library reading its window: the bytes arrive without its progress (the sender's copy), and the two signals
// are counted when it then waits. Rank 1 gives up after 30 s of nothing.
bool putLandsInABusyTarget() {
  if (nranks < 2) return true;
  constexpr size_t kBytes = 1 << 20;
  WindowVector<uint8_t> mine(kBytes + 64, 0);
  chorusWindow_t win = nullptr;
  CHECK_CALL(chorusCommWindowRegister(comm, mine.data(), mine.size(), &win, 0));
  if (rank == 0) {
    std::vector<uint8_t> out(kBytes);
    for (size_t i = 0; i < kBytes; ++i) out[i] = byteOf(0, 1, i);
    const uint64_t flag = 0x600df1a6;
    CHECK_CALL(chorusPutSignal(out.data(), kBytes, chorusUint8, 1, win, 0, 7, 0, 0, comm, nullptr));
    CHECK_CALL(chorusPutSignal(&flag, 1, chorusUint64, 1, win, kBytes, 7, 0, 0, comm, nullptr));
  } else if (rank == 1) {
    auto* flag = reinterpret_cast<uint64_t*>(mine.data() + kBytes);
    const auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::atomic_ref<uint64_t>(*flag).load(std::memory_order_acquire) != 0x600df1a6) {
      CHECK_THAT(std::chrono::steady_clock::now() < giveUp, "the put never arrived while this rank was busy");
    }
    for (size_t i = 0; i < kBytes; ++i) CHECK_THAT(mine[i] == byteOf(0, 1, i), "byte %zu of the busy target", i);
    chorusWaitSignalDesc_t d{.opCnt = 2, .peer = 0, .sigIdx = 7, .ctx = 0};
    CHECK_CALL(chorusWaitSignal(1, &d, comm, nullptr));
  }
  CHECK_CALL(chorusCommWindowDeregister(comm, win));
  return true;
}

// Rank 1 exits without a word once the window is registered; rank 0 waits for a signal from it, which must fail
// promptly as a lost peer naming rank 1 (not at the timeout). Prints "peer loss seen" on rank 0.
int peerDies() {
  WindowVector<uint8_t> mine(64);
  chorusWindow_t win = nullptr;
  chorusResult_t r = chorusCommWindowRegister(comm, mine.data(), mine.size(), &win, 0);
  if (r != chorusSuccess) {
    std::printf("rank %d: register failed: %s\n", rank, chorusGetLastError(nullptr));
    return 1;
  }
  if (rank == 1) std::_Exit(0);
  chorusWaitSignalDesc_t d{.opCnt = 1, .peer = 1, .sigIdx = 0, .ctx = 0};
  r = chorusWaitSignal(1, &d, comm, nullptr);
  const std::string error = chorusGetLastError(nullptr);
  std::printf("rank %d: wait returned %s: %s\n", rank, chorusGetErrorString(r), error.c_str());
  if (r == chorusRemoteError && error.find("peer 1") != std::string::npos) std::printf("peer loss seen\n");
  std::fflush(stdout);
  std::_Exit(r == chorusRemoteError ? 0 : 1);
}

// One 8-byte put to the next rank, waited for by it: a short run whose log (CHORUS_DEBUG=INFO) names the path the
// puts take. Prints "one put right".
int onePut() {
  const int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
  uint64_t mine = 0, out = 0x1122334455667788u + static_cast<uint64_t>(rank);
  chorusWindow_t win = nullptr;
  chorusWaitSignalDesc_t d{.opCnt = 1, .peer = prev, .sigIdx = 0, .ctx = 0};
  if (chorusCommWindowRegister(comm, &mine, sizeof(mine), &win, 0) != chorusSuccess ||
      chorusPutSignal(&out, 1, chorusUint64, next, win, 0, 0, 0, 0, comm, nullptr) != chorusSuccess ||
      chorusWaitSignal(1, &d, comm, nullptr) != chorusSuccess ||
      chorusCommWindowDeregister(comm, win) != chorusSuccess) {
    std::printf("rank %d: %s\n", rank, chorusGetLastError(nullptr));
    return 1;
  }
  if (mine == 0x1122334455667788u + static_cast<uint64_t>(prev)) std::printf("rank %d: one put right\n", rank);
  std::fflush(stdout);
  chorusCommDestroy(comm);
  return 0;
}

}  // namespace

int main() {
  const char* rankText = std::getenv("CHORUS_RANK");
  const char* sizeText = std::getenv("CHORUS_WORLD_SIZE");
  chorus::test::emulateHosts(rankText ? std::atoi(rankText) : -1, sizeText ? std::atoi(sizeText) : 0);
  chorusResult_t r = chorusCommInitFromEnv(&comm);
  if (r != chorusSuccess) {
    std::printf("chorusCommInitFromEnv failed: %s: %s\n", chorusGetErrorString(r), chorusGetLastError(nullptr));
    return 1;
  }
  chorusCommUserRank(comm, &rank);
  chorusCommCount(comm, &nranks);
  int passed = 0;
  bool ok = true;
  const char* scenario = std::getenv("CHORUS_WINDOW_WORKER_SCENARIO");
  const char* memAlloc = std::getenv("CHORUS_WINDOW_WORKER_MEMALLOC");
  chorus::test::windowMemAlloc() = memAlloc && std::string(memAlloc) == "1";
  if (scenario && std::string(scenario) == "peer_dies") return peerDies();
  if (scenario && std::string(scenario) == "one_put") return onePut();
  const bool verbose = std::getenv("CHORUS_WINDOW_WORKER_VERBOSE") != nullptr;
  std::vector<bool (*)()> checks{allToAllPuts,       manyPutsThenOneSignal, putLandsWhileTargetReceives,
                                 flushedLargePut,    moeDispatchCombine,    pipelineHandOff};
  if (chorus::test::windowMemAlloc()) checks.push_back(putLandsInABusyTarget);
  for (bool (*check)() : checks) {
    if (verbose) std::printf("rank %d: check %d\n", rank, passed), std::fflush(stdout);
    if (!(ok = check())) break;
    ++passed;
  }
  if (ok) std::printf("rank %d: windows: %d checks right\n", rank, passed);
  std::fflush(stdout);
  chorusCommDestroy(comm);
  return ok ? 0 : 1;
}
