// The ranks' side of the device window tests (windows of device memory, put and signal on a CUDA stream): each
// rank runs every scenario on the device API the process uses (the emulated device, or a GPU) and returns what was
// wrong. Shared by the ranks-as-threads and ranks-as-processes tests of tests/collectives/device_windows_test.cc.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "chorus/chorus.h"
#include "device/device_api.h"

namespace chorus::test::device_windows {

struct Rank {
  chorusComm_t comm = nullptr;
  int rank = 0, n = 1;
  DeviceApi* api = nullptr;
  DeviceStream stream = nullptr;
  std::string problems;
  void problem(const std::string& what) { problems += "  " + what + "\n"; }
  bool ok(chorusResult_t r, const std::string& what) {
    if (r == chorusSuccess) return true;
    problem(what + ": " + chorusGetErrorString(r) + ": " + chorusGetLastError(comm));
    return false;
  }
  chorusStream_t cs() const { return static_cast<chorusStream_t>(stream); }
};

// Device memory holding `bytes`, freed at the end of the scope.
struct DeviceBuffer {
  DeviceBuffer(DeviceApi& a, size_t bytes) : api(a), size(bytes) { p = static_cast<uint8_t*>(a.deviceAlloc(bytes)); }
  ~DeviceBuffer() { api.deviceFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceApi& api;
  size_t size;
  uint8_t* p;
};

inline void upload(Rank& w, void* dst, const std::vector<uint8_t>& host) {
  w.api->copyAsync(dst, host.data(), host.size(), w.stream);
  w.api->synchronize(w.stream);
}
inline std::vector<uint8_t> download(Rank& w, const void* src, size_t bytes) {
  std::vector<uint8_t> host(bytes);
  w.api->copyAsync(host.data(), src, bytes, w.stream);
  w.api->synchronize(w.stream);
  return host;
}

inline uint8_t byteOf(int from, int to, size_t i) {
  return static_cast<uint8_t>(from * 31 + to * 7 + i * 13 + (i >> 8));
}

// A host barrier through an allreduce on host memory (NULL stream).
inline void barrier(Rank& w) {
  int x = 1, y = 0;
  w.ok(chorusAllReduce(&x, &y, 1, chorusInt32, chorusSum, w.comm, nullptr), "barrier");
}

// Every rank puts a block into every rank's window (itself included) at an offset naming the sender, each with a
// signal; every rank's stream waits for one from each, then copies the window out.
inline void everyToEvery(Rank& w) {
  const size_t block = 1000 + 24 * static_cast<size_t>(w.rank);  // what each sender puts into this rank
  DeviceBuffer win(*w.api, block * static_cast<size_t>(w.n) + 17);
  upload(w, win.p, std::vector<uint8_t>(win.size, 0));
  chorusWindow_t h = nullptr;
  if (!w.ok(chorusCommWindowRegister(w.comm, win.p, win.size, &h, 0), "register")) return;
  std::vector<std::unique_ptr<DeviceBuffer>> sources;
  for (int to = 0; to < w.n; ++to) {
    const size_t b = 1000 + 24 * static_cast<size_t>(to);
    std::vector<uint8_t> out(b);
    for (size_t i = 0; i < b; ++i) out[i] = byteOf(w.rank, to, i);
    sources.push_back(std::make_unique<DeviceBuffer>(*w.api, b));
    upload(w, sources.back()->p, out);
  }
  for (int k = 0; k < w.n; ++k) {
    const int to = (w.rank + k) % w.n;  // not all into rank 0 first
    const size_t b = 1000 + 24 * static_cast<size_t>(to);
    w.ok(chorusPutSignal(sources[to]->p, b, chorusUint8, to, h, b * static_cast<size_t>(w.rank), 0, 0, 0, w.comm,
                         w.cs()),
         "put to " + std::to_string(to));
  }
  std::vector<chorusWaitSignalDesc_t> descs;
  for (int from = 0; from < w.n; ++from) descs.push_back({.opCnt = 1, .peer = from, .sigIdx = 0, .ctx = 0});
  w.ok(chorusWaitSignal(w.n, descs.data(), w.comm, w.cs()), "wait");
  const std::vector<uint8_t> got = download(w, win.p, win.size);
  for (int from = 0; from < w.n; ++from) {
    for (size_t i = 0; i < block; ++i) {
      if (got[block * static_cast<size_t>(from) + i] != byteOf(from, w.rank, i)) {
        w.problem("everyToEvery: byte " + std::to_string(i) + " from " + std::to_string(from) + " wrong");
        break;
      }
    }
  }
  for (size_t i = block * static_cast<size_t>(w.n); i < got.size(); ++i) {
    if (got[i] != 0) w.problem("everyToEvery: byte past the puts changed");
  }
  w.ok(chorusCommWindowDeregister(w.comm, h), "deregister");
}

// 64 puts then one bare signal: once the stream has waited for the signal, every put is in; the 64 put signals
// are consumed in parts, and a second wait on the bare signal's index needs a new one.
inline void manyPutsThenOneSignal(Rank& w) {
  if (w.n < 2) return;
  constexpr int kPuts = 64;
  constexpr size_t kEach = 3000;
  DeviceBuffer win(*w.api, kPuts * kEach);
  upload(w, win.p, std::vector<uint8_t>(win.size, 0));
  chorusWindow_t h = nullptr;
  if (!w.ok(chorusCommWindowRegister(w.comm, win.p, win.size, &h, 0), "register")) return;
  DeviceBuffer src(*w.api, kPuts * kEach);
  std::vector<uint8_t> out(src.size);
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint8_t>(i * 7 + i / 3000);
  upload(w, src.p, out);
  if (w.rank == 0) {
    for (int p = 0; p < kPuts; ++p) {
      w.ok(chorusPutSignal(src.p + p * kEach, kEach, chorusUint8, 1, h, p * kEach, 1, 0, 0, w.comm, w.cs()), "put");
    }
    w.ok(chorusSignal(1, 2, 3, 0, w.comm, w.cs()), "signal");
  } else if (w.rank == 1) {
    chorusWaitSignalDesc_t last{.opCnt = 1, .peer = 0, .sigIdx = 2, .ctx = 3};
    w.ok(chorusWaitSignal(1, &last, w.comm, w.cs()), "wait for the bare signal");
    if (download(w, win.p, win.size) != out) w.problem("manyPuts: the puts were not all in after the signal");
    chorusWaitSignalDesc_t parts[2] = {{.opCnt = 60, .peer = 0, .sigIdx = 1, .ctx = 0},
                                       {.opCnt = 4, .peer = 0, .sigIdx = 1, .ctx = 0}};
    w.ok(chorusWaitSignal(2, parts, w.comm, w.cs()), "wait for the put signals");
    w.api->synchronize(w.stream);
  }
  barrier(w);
  // Round two: rank 1's stream waits for one more bare signal before it copies the window out; rank 0 puts new
  // bytes (no signal of their own: index 1 is not waited for) and only then raises it.
  for (uint8_t& b : out) b = static_cast<uint8_t>(b ^ 0x5a);
  if (w.rank == 1) {
    chorusWaitSignalDesc_t again{.opCnt = 1, .peer = 0, .sigIdx = 2, .ctx = 3};
    w.ok(chorusWaitSignal(1, &again, w.comm, w.cs()), "second wait");
    std::vector<uint8_t> got(win.size);
    w.api->copyAsync(got.data(), win.p, win.size, w.stream);
    barrier(w);
    w.api->synchronize(w.stream);
    if (got != out) w.problem("manyPuts: the second wait did not wait for the new signal (counts not consumed?)");
    chorusWaitSignalDesc_t rest{.opCnt = kPuts, .peer = 0, .sigIdx = 1, .ctx = 0};
    w.ok(chorusWaitSignal(1, &rest, w.comm, w.cs()), "wait for the second round's put signals");
  } else {
    barrier(w);
    if (w.rank == 0) {
      upload(w, src.p, out);
      for (int p = 0; p < kPuts; ++p) {
        w.ok(chorusPutSignal(src.p + p * kEach, kEach, chorusUint8, 1, h, p * kEach, 1, 0, 0, w.comm, w.cs()), "put");
      }
      w.ok(chorusSignal(1, 2, 3, 0, w.comm, w.cs()), "signal");
    }
  }
  w.ok(chorusCommWindowDeregister(w.comm, h), "deregister");
}

// A pipeline: stage r waits for microbatch m from stage r - 1 in its window, adds nothing (the copies are the
// hand-off), and puts it on to r + 1; the last stage's result must equal the same chain run with send/recv.
inline void pipelineHandOff(Rank& w) {
  constexpr int kMicro = 3;
  constexpr size_t kBytes = 40000;
  DeviceBuffer win(*w.api, kMicro * kBytes), viaSend(*w.api, kMicro * kBytes);
  upload(w, win.p, std::vector<uint8_t>(win.size, 0));
  upload(w, viaSend.p, std::vector<uint8_t>(win.size, 0));
  chorusWindow_t h = nullptr;
  if (!w.ok(chorusCommWindowRegister(w.comm, win.p, win.size, &h, 0), "register")) return;
  if (w.rank == 0) {
    std::vector<uint8_t> in(win.size);
    for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i * 11 + 3);
    upload(w, win.p, in);
    upload(w, viaSend.p, in);
  }
  const int next = w.rank + 1, prev = w.rank - 1;
  for (int m = 0; m < kMicro; ++m) {
    uint8_t* mine = win.p + m * kBytes;
    if (prev >= 0) {
      chorusWaitSignalDesc_t d{.opCnt = 1, .peer = prev, .sigIdx = 0, .ctx = 1};
      w.ok(chorusWaitSignal(1, &d, w.comm, w.cs()), "stage wait");
    }
    if (next < w.n)
      w.ok(chorusPutSignal(mine, kBytes, chorusUint8, next, h, m * kBytes, 0, 1, 0, w.comm, w.cs()), "stage put");
  }
  for (int m = 0; m < kMicro; ++m) {
    uint8_t* mine = viaSend.p + m * kBytes;
    if (prev >= 0) w.ok(chorusRecv(mine, kBytes, chorusUint8, prev, w.comm, w.cs()), "recv");
    if (next < w.n) w.ok(chorusSend(mine, kBytes, chorusUint8, next, w.comm, w.cs()), "send");
  }
  if (download(w, win.p, win.size) != download(w, viaSend.p, viaSend.size)) {
    w.problem("pipeline: the window's microbatches differ from send/recv's");
  }
  w.ok(chorusCommWindowDeregister(w.comm, h), "deregister");
}

// MoE dispatch and combine with uneven counts: each rank puts its tokens for every expert rank into that rank's
// window where chorusAllToAllv would place them, then the experts put them back; both checked against alltoallv.
inline void moeDispatchCombine(Rank& w) {
  const size_t n = static_cast<size_t>(w.n), me = static_cast<size_t>(w.rank);
  auto count = [](size_t from, size_t to) { return ((from * 3 + to * 5) % 7 + 1) * 16; };  // floats
  std::vector<size_t> sendCounts(n), sendDispls(n), recvCounts(n), recvDispls(n);
  size_t sendTotal = 0, recvTotal = 0;
  for (size_t p = 0; p < n; ++p) {
    sendCounts[p] = count(me, p), sendDispls[p] = sendTotal, sendTotal += sendCounts[p];
    recvCounts[p] = count(p, me), recvDispls[p] = recvTotal, recvTotal += recvCounts[p];
  }
  // Where rank `from`'s tokens land in rank `to`'s receive layout.
  auto landAt = [&](size_t from, size_t to) {
    size_t at = 0;
    for (size_t q = 0; q < from; ++q) at += count(q, to);
    return at;
  };
  // Where rank `from`'s tokens for rank `to` start in its send layout.
  auto sentFrom = [&](size_t from, size_t to) {
    size_t at = 0;
    for (size_t q = 0; q < to; ++q) at += count(from, q);
    return at;
  };
  std::vector<float> tokens(sendTotal);
  for (size_t i = 0; i < sendTotal; ++i) tokens[i] = static_cast<float>(me * 100000 + i);
  std::vector<uint8_t> tokenBytes(sendTotal * 4);
  std::memcpy(tokenBytes.data(), tokens.data(), tokenBytes.size());
  DeviceBuffer send(*w.api, sendTotal * 4), expert(*w.api, recvTotal * 4), reference(*w.api, recvTotal * 4),
      combined(*w.api, sendTotal * 4);
  upload(w, send.p, tokenBytes);
  chorusWindow_t dispatchWin = nullptr, combineWin = nullptr;
  if (!w.ok(chorusCommWindowRegister(w.comm, expert.p, expert.size, &dispatchWin, 0), "register")) return;
  if (!w.ok(chorusCommWindowRegister(w.comm, combined.p, combined.size, &combineWin, 0), "register")) return;
  for (size_t k = 0; k < n; ++k) {
    const size_t to = (me + k) % n;
    w.ok(chorusPutSignal(send.p + sendDispls[to] * 4, sendCounts[to], chorusFloat32, static_cast<int>(to), dispatchWin,
                         landAt(me, to) * 4, 0, 0, 0, w.comm, w.cs()),
         "dispatch put");
  }
  std::vector<chorusWaitSignalDesc_t> all;
  for (int p = 0; p < w.n; ++p) all.push_back({.opCnt = 1, .peer = p, .sigIdx = 0, .ctx = 0});
  w.ok(chorusWaitSignal(w.n, all.data(), w.comm, w.cs()), "dispatch wait");
  w.ok(chorusAllToAllv(send.p, sendCounts.data(), sendDispls.data(), reference.p, recvCounts.data(), recvDispls.data(),
                       chorusFloat32, w.comm, w.cs()),
       "alltoallv");
  if (download(w, expert.p, expert.size) != download(w, reference.p, reference.size)) {
    w.problem("moe: dispatched tokens differ from alltoallv's");
  }
  // Combine: the expert returns each sender's tokens to where they came from.
  for (size_t k = 0; k < n; ++k) {
    const size_t from = (me + k) % n;
    w.ok(chorusPutSignal(expert.p + recvDispls[from] * 4, recvCounts[from], chorusFloat32, static_cast<int>(from),
                         combineWin, sentFrom(from, me) * 4, 1, 0, 0, w.comm, w.cs()),
         "combine put");
  }
  for (auto& d : all) d.sigIdx = 1;
  w.ok(chorusWaitSignal(w.n, all.data(), w.comm, w.cs()), "combine wait");
  if (download(w, combined.p, combined.size) != tokenBytes) w.problem("moe: combined tokens differ from those sent");
  w.ok(chorusCommWindowDeregister(w.comm, combineWin), "deregister");
  w.ok(chorusCommWindowDeregister(w.comm, dispatchWin), "deregister");
}

// Refusals: a put past the peer's window; a put of a device window with NULL stream; a signal index past the
// counters; a wait for signals from itself never raised; a device window call inside a group; a window mixing
// host and device memory.
inline void refusals(Rank& w) {
  DeviceBuffer win(*w.api, w.rank == 0 ? 100 : 64), src(*w.api, 200);
  chorusWindow_t h = nullptr;
  if (!w.ok(chorusCommWindowRegister(w.comm, win.p, win.size, &h, 0), "register")) return;
  const int peer = (w.rank + 1) % w.n;
  const size_t peerSize = peer == 0 ? 100 : 64;
  auto expect = [&](chorusResult_t got, chorusResult_t want, const std::string& what, const std::string& text) {
    if (got != want) {
      w.problem(what + ": got " + chorusGetErrorString(got) + ", want " + chorusGetErrorString(want));
    } else if (!text.empty() && std::string(chorusGetLastError(w.comm)).find(text) == std::string::npos) {
      w.problem(what + ": the error does not say \"" + text + "\": " + chorusGetLastError(w.comm));
    }
  };
  expect(chorusPutSignal(src.p, peerSize - 9, chorusUint8, peer, h, 10, 0, 0, 0, w.comm, w.cs()), chorusInvalidArgument,
         "a put past the window", std::to_string(peerSize) + " bytes");
  expect(chorusPutSignal(src.p, 1, chorusUint8, peer, h, 0, 0, 0, 0, w.comm, nullptr), chorusInvalidUsage,
         "a put of a device window with a NULL stream", "CUDA stream");
  expect(chorusSignal(peer, 16, 0, 0, w.comm, w.cs()), chorusInvalidUsage, "sigIdx 16 on a stream", "sigIdx 16");
  chorusWaitSignalDesc_t self{.opCnt = 1, .peer = w.rank, .sigIdx = 0, .ctx = 0};
  expect(chorusWaitSignal(1, &self, w.comm, w.cs()), chorusInvalidUsage, "a wait on itself", "from itself");
  chorusGroupStart();
  expect(chorusSignal(peer, 0, 0, 0, w.comm, w.cs()), chorusInvalidUsage, "a signal in a group", "group");
  chorusGroupEnd();
  w.ok(chorusCommWindowDeregister(w.comm, h), "deregister");
  if (w.n >= 2) {
    // Rank 0 registers host memory, the others device memory: every rank refuses, naming rank 0.
    std::vector<uint8_t> host(64);
    chorusWindow_t mixed = nullptr;
    expect(chorusCommWindowRegister(w.comm, w.rank == 0 ? static_cast<void*>(host.data()) : win.p, 64, &mixed, 0),
           chorusInvalidUsage, "a window of host and device memory", "rank 0 registered host memory");
  }
}

// Puts enqueued and not waited for by their sender; deregistration returns once they are in everywhere.
inline void deregisterAfterPuts(Rank& w) {
  constexpr size_t kBytes = 1 << 20;
  DeviceBuffer win(*w.api, kBytes * static_cast<size_t>(w.n)), src(*w.api, kBytes);
  upload(w, win.p, std::vector<uint8_t>(win.size, 0));
  std::vector<uint8_t> out(kBytes);
  for (size_t i = 0; i < kBytes; ++i) out[i] = byteOf(w.rank, 0, i);
  upload(w, src.p, out);
  chorusWindow_t h = nullptr;
  if (!w.ok(chorusCommWindowRegister(w.comm, win.p, win.size, &h, 0), "register")) return;
  for (int to = 0; to < w.n; ++to) {
    w.ok(chorusPutSignal(src.p, kBytes, chorusUint8, to, h, kBytes * static_cast<size_t>(w.rank), 0, 2, 0, w.comm,
                         w.cs()),
         "put");
  }
  w.ok(chorusCommWindowDeregister(w.comm, h), "deregister");
  const std::vector<uint8_t> got = download(w, win.p, win.size);
  for (int from = 0; from < w.n; ++from) {
    for (size_t i = 0; i < kBytes; ++i) {
      if (got[kBytes * static_cast<size_t>(from) + i] != byteOf(from, 0, i)) {
        w.problem("deregisterAfterPuts: the put from " + std::to_string(from) + " was not in at deregistration");
        break;
      }
    }
  }
  // Its signals were never waited for: consume them, so that later scenarios start from zero counts.
  std::vector<chorusWaitSignalDesc_t> all;
  for (int p = 0; p < w.n; ++p) all.push_back({.opCnt = 1, .peer = p, .sigIdx = 0, .ctx = 2});
  w.ok(chorusWaitSignal(w.n, all.data(), w.comm, w.cs()), "wait");
}

// Every scenario, in order, as rank w.rank of w.n; returns "" or what went wrong.
inline std::string runAll(Rank& w) {
  try {
    everyToEvery(w);
    manyPutsThenOneSignal(w);
    pipelineHandOff(w);
    moeDispatchCombine(w);
    deregisterAfterPuts(w);
    refusals(w);
    w.api->synchronize(w.stream);
  } catch (const std::exception& e) {
    w.problem(std::string("exception: ") + e.what());
  }
  return w.problems.empty() ? "" : "rank " + std::to_string(w.rank) + ":\n" + w.problems;
}

}  // namespace chorus::test::device_windows
