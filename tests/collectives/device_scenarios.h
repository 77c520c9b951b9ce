// The ranks' side of the device collective tests: each rank of a process world runs one scenario on device
// buffers (the emulated device, or a real GPU in tests/gpu) and returns what was wrong. Shared by
// tests/collectives/device_collectives_test.cc and tests/gpu/device_collectives_gpu_test.cc, whose ranks are the
// test binaries themselves (so that they can use the device API's internals).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "chorus/chorus.h"
#include "device/device_api.h"
#include "device/poll_backoff.h"
#include "device/stream_flag.h"
#include "tests/collectives/typed_values.h"

namespace chorus::test::device_scenarios {
using Clock = std::chrono::steady_clock;
// kSendRecv: in one group, a send to rank + 1 and a receive from rank - 1.
enum class Kind {
  kAllReduce,
  kBroadcast,
  kReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kGather,
  kScatter,
  kSendRecv
};
inline const char* kindName(Kind k) {
  static const char* const names[] = {"allreduce", "broadcast", "reduce",  "allgather", "reducescatter",
                                      "alltoall",  "gather",    "scatter", "sendrecv"};
  return names[static_cast<int>(k)];
}
inline bool kindReduces(Kind k) { return k == Kind::kAllReduce || k == Kind::kReduce || k == Kind::kReduceScatter; }
inline bool kindRooted(Kind k) {
  return k == Kind::kBroadcast || k == Kind::kReduce || k == Kind::kGather || k == Kind::kScatter;
}
inline bool kindInPlace(Kind k) { return k != Kind::kAllToAll && k != Kind::kSendRecv; }
// Blocks of `count` elements in the send and receive buffers.
inline size_t sendBlocks(Kind k, size_t n) {
  return (k == Kind::kReduceScatter || k == Kind::kAllToAll || k == Kind::kScatter) ? n : 1;
}
inline size_t recvBlocks(Kind k, size_t n) {
  return (k == Kind::kAllGather || k == Kind::kAllToAll || k == Kind::kGather) ? n : 1;
}

struct DeviceCase {
  Kind kind;
  chorusDataType_t type;
  chorusRedOp_t op;
  size_t count;
  int root;
  bool inPlace;
  bool legacyStream;  // on the legacy default stream (NULL) instead of a created one
  uint32_t salt;
};

inline std::string describe(const DeviceCase& c) {
  std::ostringstream os;
  os << kindName(c.kind) << "(" << chorusTypeName(c.type) << ", " << chorusOpName(c.op) << ", count " << c.count
     << ", root " << c.root << (c.inPlace ? ", in place" : ", out of place")
     << (c.legacyStream ? ", legacy stream" : "") << ", salt " << c.salt << ")";
  return os.str();
}

// What one rank works with: the communicator, the device, a stream, and a gate (a flag in pinned memory that holds
// the stream until the host raises it, so that everything a case enqueues is queued before any of it runs).
struct Rank {
  chorusComm_t comm = nullptr;
  int rank = -1, n = 0;
  DeviceApi* api = nullptr;
  DeviceStream stream = nullptr;
  uint32_t* gate = nullptr;
  uint32_t gateValue = 0;
  std::string problems;

  void problem(const std::string& what) { problems += (problems.empty() ? "" : "\n") + what; }
  // The communicator's device calls block the caller (CHORUS_DEVICE_CALLS=blocking, or auto where holding a stream
  // is unsafe: CHORUS_DEVICE_TEST_BLOCKING=1 says the test expects it). A stream held at the gate would then hold
  // the call itself, so the cases run ungated and check that the result is in place when the call returns.
  bool blocking = false;
  // Holds `s` at the gate until openGate().
  void closeGate(DeviceStream s) { api->streamWaitFlag(s, gate, ++gateValue); }
  void openGate() { raiseStreamFlag(*api, gate, gateValue); }
};

// Device memory the case frees on exit.
struct DeviceBlock {
  DeviceApi& api;
  char* p;
  DeviceBlock(DeviceApi& a, size_t bytes) : api(a), p(static_cast<char*>(a.deviceAlloc(bytes))) {}
  ~DeviceBlock() { api.deviceFree(p); }
};
struct PinnedBlock {
  DeviceApi& api;
  char* p;
  PinnedBlock(DeviceApi& a, size_t bytes) : api(a), p(static_cast<char*>(a.pinnedAlloc(bytes))) {}
  ~PinnedBlock() { api.pinnedFree(p); }
};

inline chorusResult_t call(const DeviceCase& c, Rank& w, const void* send, void* recv, DeviceStream s) {
  switch (c.kind) {
    case Kind::kAllReduce:
      return chorusAllReduce(send, recv, c.count, c.type, c.op, w.comm, s);
    case Kind::kBroadcast:
      return chorusBroadcast(send, recv, c.count, c.type, c.root, w.comm, s);
    case Kind::kReduce:
      return chorusReduce(send, recv, c.count, c.type, c.op, c.root, w.comm, s);
    case Kind::kAllGather:
      return chorusAllGather(send, recv, c.count, c.type, w.comm, s);
    case Kind::kReduceScatter:
      return chorusReduceScatter(send, recv, c.count, c.type, c.op, w.comm, s);
    case Kind::kAllToAll:
      return chorusAllToAll(send, recv, c.count, c.type, w.comm, s);
    case Kind::kGather:
      return chorusGather(send, recv, c.count, c.type, c.root, w.comm, s);
    case Kind::kScatter:
      return chorusScatter(send, recv, c.count, c.type, c.root, w.comm, s);
    case Kind::kSendRecv: {
      chorusResult_t r = chorusGroupStart();
      if (r == chorusSuccess) r = chorusSend(send, c.count, c.type, (w.rank + 1) % w.n, w.comm, s);
      if (r == chorusSuccess) r = chorusRecv(recv, c.count, c.type, (w.rank + w.n - 1) % w.n, w.comm, s);
      const chorusResult_t ended = chorusGroupEnd();
      return r == chorusSuccess ? ended : r;
    }
  }
  return chorusInternalError;
}

// The host reference of the whole output on this rank.
inline std::vector<uint8_t> expectedOutput(const DeviceCase& c, int rank, int n) {
  const size_t es = chorusTypeSize(c.type);
  const size_t elems = recvBlocks(c.kind, static_cast<size_t>(n)) * c.count;
  const size_t block = std::max<size_t>(c.count, 1);
  std::vector<uint8_t> out(elems * es);
  auto reduced = [&](size_t index, uint8_t* dst) {
    int64_t acc = inputValue(c.type, c.op, 0, index, c.salt);
    for (int r = 1; r < n; ++r) acc = combineExact(c.op, acc, inputValue(c.type, c.op, r, index, c.salt));
    encodeReduced(c.type, c.op, acc, n, dst);
  };
  for (size_t i = 0; i < elems; ++i) {
    uint8_t* dst = out.data() + i * es;
    switch (c.kind) {
      case Kind::kAllReduce:
      case Kind::kReduce:
        reduced(i, dst);
        break;
      case Kind::kBroadcast:
        encodeValue(c.type, inputValue(c.type, c.op, c.root, i, c.salt), dst);
        break;
      case Kind::kAllGather:
        encodeValue(c.type, inputValue(c.type, c.op, static_cast<int>(i / c.count), i % c.count, c.salt), dst);
        break;
      case Kind::kReduceScatter:
        reduced(static_cast<size_t>(rank) * c.count + i, dst);
        break;
      case Kind::kAllToAll:
        encodeValue(c.type,
                    inputValue(c.type, c.op, static_cast<int>(i / block),
                               static_cast<size_t>(rank) * c.count + i % block, c.salt),
                    dst);
        break;
      case Kind::kGather:
        encodeValue(c.type, inputValue(c.type, c.op, static_cast<int>(i / block), i % block, c.salt), dst);
        break;
      case Kind::kScatter:
        encodeValue(c.type, inputValue(c.type, c.op, c.root, static_cast<size_t>(rank) * c.count + i, c.salt), dst);
        break;
      case Kind::kSendRecv:
        encodeValue(c.type, inputValue(c.type, c.op, (rank + n - 1) % n, i, c.salt), dst);
        break;
    }
  }
  return out;
}

// One call with the input written by a copy enqueued just before it and the output read by a copy enqueued just
// after it, all held at the gate until every one of them is queued.
inline void runCase(Rank& w, const DeviceCase& c) {
  DeviceApi& api = *w.api;
  DeviceStream s = c.legacyStream ? nullptr : w.stream;
  const size_t es = chorusTypeSize(c.type), n = static_cast<size_t>(w.n), rank = static_cast<size_t>(w.rank);
  const size_t sendBytes = sendBlocks(c.kind, n) * c.count * es;
  const size_t recvBytes = recvBlocks(c.kind, n) * c.count * es;
  DeviceBlock a(api, c.inPlace ? std::max(sendBytes, recvBytes) : sendBytes);
  DeviceBlock b(api, c.inPlace ? 0 : recvBytes);
  char* send = a.p;
  char* recv = c.inPlace ? a.p : b.p;
  if (c.inPlace && c.kind == Kind::kAllGather) send = a.p + rank * c.count * es;
  if (c.inPlace && c.kind == Kind::kReduceScatter) recv = a.p + rank * c.count * es;
  // Gather and scatter are in place on the root only (MPI's layout); elsewhere they run out of place.
  const bool root = w.rank == c.root;
  DeviceBlock extra(api, c.inPlace && !root && (c.kind == Kind::kGather || c.kind == Kind::kScatter) ? recvBytes : 0);
  if (c.inPlace && c.kind == Kind::kGather) {
    if (root) {
      send = a.p + rank * c.count * es;
    } else {
      recv = extra.p;
    }
  }
  if (c.inPlace && c.kind == Kind::kScatter) {
    if (root) {
      recv = a.p + rank * c.count * es;
    } else {
      recv = extra.p;
    }
  }
  PinnedBlock in(api, sendBytes), out(api, recvBytes), stale(api, std::max(sendBytes, recvBytes));
  for (size_t i = 0; i < sendBytes / std::max<size_t>(es, 1); ++i) {
    encodeValue(c.type, inputValue(c.type, c.op, w.rank, i, c.salt), in.p + i * es);
  }
  // Stale bytes everywhere first, so that a result read too early, or an input read before it was written,
  // shows.
  if (stale.p) std::memset(stale.p, 0x7D, std::max(sendBytes, recvBytes));
  api.copyAsync(recv, stale.p, recvBytes, s);
  if (!c.inPlace) api.copyAsync(send, stale.p, sendBytes, s);
  api.synchronize(s);
  if (!w.blocking) w.closeGate(s);
  api.copyAsync(send, in.p, sendBytes, s);
  const auto before = Clock::now();
  const chorusResult_t result = call(c, w, send, recv, s);
  const auto returnedAfter = Clock::now() - before;
  // Blocking, on the emulated device (whose memory the host reads): the result is there before anything follows.
  const bool readNow = w.blocking && result == chorusSuccess && std::string(api.name()) == "emulated";
  if (readNow && recvBytes > 0) std::memcpy(out.p, recv, recvBytes);
  if (!readNow) api.copyAsync(out.p, recv, recvBytes, s);
  if (!w.blocking) w.openGate();
  api.synchronize(s);
  if (result != chorusSuccess) {
    w.problem(describe(c) + ": " + chorusGetErrorString(result) + ": " + chorusGetLastError(w.comm));
    return;
  }
  // The call cannot have waited for its input (the gate held it): it returned at once.
  if (!w.blocking && returnedAfter > std::chrono::seconds(5)) w.problem(describe(c) + ": the call blocked the host");
  if ((c.kind == Kind::kReduce || c.kind == Kind::kGather) && w.rank != c.root) return;
  const std::vector<uint8_t> want = expectedOutput(c, w.rank, w.n);
  for (size_t i = 0; i * es < recvBytes; ++i) {
    if (std::memcmp(out.p + i * es, want.data() + i * es, es) != 0) {
      w.problem(describe(c) + ": element " + std::to_string(i) + " is " + formatElement(c.type, out.p + i * es) +
                ", want " + formatElement(c.type, want.data() + i * es));
      return;
    }
  }
}

inline std::vector<DeviceCase> casesFor(int n, bool small) {
  struct TypeOp {
    chorusDataType_t type;
    chorusRedOp_t op;
  };
  const std::vector<TypeOp> pairs =
      small ? std::vector<TypeOp>{{chorusFloat32, chorusSum}, {chorusFloat16, chorusAvg}}
            : std::vector<TypeOp>{{chorusFloat32, chorusSum}, {chorusInt32, chorusMax}, {chorusFloat16, chorusAvg}};
  const std::vector<size_t> counts =
      small ? std::vector<size_t>{1, 1031, 9001} : std::vector<size_t>{0, 1, 1031, 20000};
  std::vector<DeviceCase> cases;
  uint32_t salt = 1;
  for (Kind kind : {Kind::kAllReduce, Kind::kBroadcast, Kind::kReduce, Kind::kAllGather, Kind::kReduceScatter,
                    Kind::kAllToAll, Kind::kGather, Kind::kScatter, Kind::kSendRecv}) {
    const bool reduces = kindReduces(kind);
    const bool rooted = kindRooted(kind);
    for (const TypeOp& p : pairs) {
      if (!reduces && p.type == chorusInt32) continue;
      for (size_t count : counts) {
        for (bool inPlace : {false, true}) {
          if (inPlace && !kindInPlace(kind)) continue;
          for (int root : rooted ? std::vector<int>{0, n - 1} : std::vector<int>{-1}) {
            const bool legacy = salt % 5 == 0;  // some on the legacy default stream
            cases.push_back({kind, p.type, reduces ? p.op : chorusSum, count, root, inPlace, legacy, salt++});
          }
        }
      }
    }
  }
  return cases;
}

// Refusals that need no peer, then a broadcast with a host sendbuff off the root (unused there), then device
// calls followed by a host call, which must find them finished.
inline void validationAndOrder(Rank& w) {
  DeviceApi& api = *w.api;
  DeviceBlock dev(api, 64 * sizeof(float));
  std::vector<float> host(64, 1.0f);
  auto refused = [&](chorusResult_t r, const char* what, std::vector<std::string> words) {
    if (r != chorusInvalidArgument) {
      w.problem(std::string(what) + " returned " + chorusGetErrorString(r) + ", want invalid argument");
      return;
    }
    const std::string text = chorusGetLastError(w.comm);
    for (const std::string& word : words) {
      if (text.find(word) == std::string::npos)
        w.problem(std::string(what) + ": last error lacks \"" + word + "\": " + text);
    }
  };
  refused(chorusAllReduce(dev.p, host.data(), 64, chorusFloat32, chorusSum, w.comm, w.stream), "device send, host recv",
          {"sendbuff", "recvbuff", "device", "host"});
  refused(chorusAllGather(host.data(), dev.p, 16, chorusFloat32, w.comm, nullptr), "host send, device recv",
          {"sendbuff", "recvbuff", "device", "host"});
  refused(chorusAllReduce(host.data(), host.data(), 64, chorusFloat32, chorusSum, w.comm, w.stream),
          "host buffers with a stream", {"stream", "host"});

  // Broadcast from rank 0: the others' sendbuff is never read, so a host pointer there is not a mix.
  DeviceCase bcast{Kind::kBroadcast, chorusFloat32, chorusSum, 64, 0, false, false, 77};
  PinnedBlock in(api, 64 * sizeof(float)), out(api, 64 * sizeof(float));
  for (size_t i = 0; i < 64; ++i)
    encodeValue(chorusFloat32, inputValue(chorusFloat32, chorusSum, w.rank, i, 77), in.p + i * sizeof(float));
  api.copyAsync(dev.p, in.p, 64 * sizeof(float), w.stream);
  const void* send = w.rank == 0 ? static_cast<const void*>(dev.p) : static_cast<const void*>(host.data());
  chorusResult_t r = chorusBroadcast(send, dev.p, 64, chorusFloat32, 0, w.comm, w.stream);
  api.copyAsync(out.p, dev.p, 64 * sizeof(float), w.stream);
  api.synchronize(w.stream);
  if (r != chorusSuccess)
    w.problem(std::string("broadcast with a host sendbuff off the root: ") + chorusGetLastError(w.comm));
  if (std::memcmp(out.p, expectedOutput(bcast, w.rank, w.n).data(), 64 * sizeof(float)) != 0) {
    w.problem("broadcast with a host sendbuff off the root: wrong result");
  }

  // Device calls, then at once a host call: when it returns, the device calls are done. The results are read
  // through another stream, which does not wait for the calls' stream (nor for the flags it waits on).
  constexpr int kCalls = 6;
  constexpr size_t kCount = 5000;
  std::vector<std::unique_ptr<DeviceBlock>> results;
  PinnedBlock input(api, kCount * sizeof(int32_t));
  for (int k = 0; k < kCalls; ++k) {
    results.push_back(std::make_unique<DeviceBlock>(api, kCount * sizeof(int32_t)));
    DeviceCase c{Kind::kAllReduce, chorusInt32, chorusSum, kCount, -1, true, false, static_cast<uint32_t>(100 + k)};
    for (size_t i = 0; i < kCount; ++i) {
      encodeValue(chorusInt32, inputValue(chorusInt32, chorusSum, w.rank, i, c.salt), input.p + i * sizeof(int32_t));
    }
    api.copyAsync(results.back()->p, input.p, kCount * sizeof(int32_t), w.stream);
    api.synchronize(w.stream);  // `input` is rewritten for the next call
    r = chorusAllReduce(results.back()->p, results.back()->p, kCount, chorusInt32, chorusSum, w.comm, w.stream);
    if (r != chorusSuccess)
      w.problem(std::string("device allreduce before a host call: ") + chorusGetLastError(w.comm));
  }
  int32_t x = w.rank + 1;
  r = chorusAllReduce(&x, &x, 1, chorusInt32, chorusSum, w.comm, nullptr);
  if (r != chorusSuccess) w.problem(std::string("host allreduce after device calls: ") + chorusGetLastError(w.comm));
  if (x != w.n * (w.n + 1) / 2) w.problem("host allreduce after device calls: wrong result " + std::to_string(x));
  DeviceStream probe = api.createStream();
  PinnedBlock seen(api, kCount * sizeof(int32_t));
  for (int k = 0; k < kCalls; ++k) {
    DeviceCase c{Kind::kAllReduce, chorusInt32, chorusSum, kCount, -1, true, false, static_cast<uint32_t>(100 + k)};
    api.copyAsync(seen.p, results[k]->p, kCount * sizeof(int32_t), probe);
    api.synchronize(probe);
    if (std::memcmp(seen.p, expectedOutput(c, w.rank, w.n).data(), kCount * sizeof(int32_t)) != 0) {
      w.problem("device allreduce " + std::to_string(k) + " not finished (or wrong) when the host call returned");
    }
  }
  api.destroyStream(probe);
  api.synchronize(w.stream);
}

// Waits (bounded) until the communicator reports an async error; returns it.
inline chorusResult_t awaitAsyncError(Rank& w) {
  const auto until = Clock::now() + std::chrono::seconds(60);
  PollBackoff backoff;
  chorusResult_t e = chorusSuccess;
  while (chorusCommGetAsyncError(w.comm, &e) == chorusSuccess && e == chorusSuccess && Clock::now() < until) {
    backoff.pause();
  }
  return e;
}

// A call whose stream never reaches it (the gate stays closed past CHORUS_TIMEOUT): the async error says so, the
// stream is not left waiting on Chorus, and later calls fail.
inline void failure(Rank& w) {
  DeviceApi& api = *w.api;
  DeviceBlock dev(api, 256 * sizeof(float));
  w.closeGate(w.stream);
  chorusResult_t r = chorusAllReduce(dev.p, dev.p, 256, chorusFloat32, chorusSum, w.comm, w.stream);
  if (r != chorusSuccess) w.problem(std::string("enqueueing the doomed call: ") + chorusGetLastError(w.comm));
  DeviceEvent after = api.createEvent();
  api.recordEvent(after, w.stream);
  const chorusResult_t async = awaitAsyncError(w);
  if (async != chorusTimeout) w.problem(std::string("async error ") + chorusGetErrorString(async) + ", want timeout");
  const std::string text = chorusGetLastError(w.comm);
  if (text.find("CHORUS_TIMEOUT") == std::string::npos) w.problem("last error does not name the timeout: " + text);
  w.openGate();
  // The flag was raised despite the failure: the stream runs on (a hang here is caught by the harness deadline).
  api.synchronize(w.stream);
  if (!api.eventDone(after)) w.problem("the stream did not get past the failed call");
  r = chorusAllReduce(dev.p, dev.p, 256, chorusFloat32, chorusSum, w.comm, w.stream);
  if (r == chorusSuccess) w.problem("a device call after the failure was accepted");
  float x = 1;
  r = chorusAllReduce(&x, &x, 1, chorusFloat32, chorusSum, w.comm, nullptr);
  if (r == chorusSuccess) w.problem("a host call after the failure was accepted");
  api.destroyEvent(after);
}

// Abort while calls are queued behind a closed gate: abort returns, and the stream runs on once the gate opens.
inline void abortQueued(Rank& w) {
  DeviceApi& api = *w.api;
  DeviceBlock dev(api, 256 * sizeof(float));
  w.closeGate(w.stream);
  for (int k = 0; k < 3; ++k) {
    if (chorusAllReduce(dev.p, dev.p, 256, chorusFloat32, chorusSum, w.comm, w.stream) != chorusSuccess) {
      w.problem(std::string("enqueueing before the abort: ") + chorusGetLastError(w.comm));
    }
  }
  if (chorusCommAbort(w.comm) != chorusSuccess) w.problem("chorusCommAbort failed");
  w.comm = nullptr;
  w.openGate();
  api.synchronize(w.stream);
}

// Runs `scenario` ("collectives", "collectives_small", "validation_and_order", "failure", "abort") as one rank of
// the world CHORUS_* describes, with the device API CHORUS_DEVICE_TEST_API names ("emulated" or "cuda"); returns
// "" or what went wrong.
inline std::string runDeviceScenario(const std::string& scenario) {
  Rank w;
  const char* rankText = std::getenv("CHORUS_RANK");
  const char* sizeText = std::getenv("CHORUS_WORLD_SIZE");
  if (const char* hosts = std::getenv("CHORUS_DEVICE_TEST_HOSTS"); hosts && *hosts && rankText && sizeText) {
    // Contiguous blocks of ranks per emulated host, as chorusrun --hosts makes them.
    const int h = std::atoi(hosts), r = std::atoi(rankText), n = std::atoi(sizeText);
    setenv("CHORUS_HOST_ID", ("device-test-host-" + std::to_string(r * h / n)).c_str(), 1);
  }
  if (chorusCommInitFromEnv(&w.comm) != chorusSuccess) return std::string("init: ") + chorusGetLastError(nullptr);
  chorusCommUserRank(w.comm, &w.rank);
  chorusCommCount(w.comm, &w.n);
  w.api = &deviceApi();
  const char* wantApi = std::getenv("CHORUS_DEVICE_TEST_API");
  const std::string want = wantApi && *wantApi ? wantApi : "emulated";
  if (want != w.api->name()) return std::string("the device API is ") + w.api->name() + ", not " + want;
  w.stream = w.api->createStream();
  const char* blocking = std::getenv("CHORUS_DEVICE_TEST_BLOCKING");
  w.blocking = blocking != nullptr && std::string(blocking) == "1";
  w.gate = static_cast<uint32_t*>(w.api->pinnedAlloc(64));
  *w.gate = 0;
  try {
    if (scenario == "collectives" || scenario == "collectives_small") {
      // CHORUS_DEVICE_TEST_ONLY=allreduce (a collective's name) narrows the grid, for debugging by hand.
      const char* only = std::getenv("CHORUS_DEVICE_TEST_ONLY");
      for (const DeviceCase& c : casesFor(w.n, scenario == "collectives_small")) {
        if (only == nullptr || *only == '\0' || std::string(only) == kindName(c.kind)) runCase(w, c);
      }
    } else if (scenario == "validation_and_order") {
      validationAndOrder(w);
    } else if (scenario == "failure") {
      failure(w);
    } else if (scenario == "abort") {
      abortQueued(w);
    } else {
      w.problem("unknown scenario " + scenario);
    }
  } catch (const std::exception& e) {
    w.problem(std::string("exception: ") + e.what());
  }
  if (w.comm != nullptr) {
    chorusResult_t async = chorusSuccess;
    chorusCommGetAsyncError(w.comm, &async);
    if (async != chorusSuccess && scenario != "failure") {
      w.problem(std::string("async error ") + chorusGetErrorString(async) + ": " + chorusGetLastError(w.comm));
    }
    chorusCommDestroy(w.comm);
  }
  w.api->synchronize(w.stream);
  w.api->destroyStream(w.stream);
  w.api->pinnedFree(w.gate);
  return w.problems.empty() ? "" : "rank " + std::to_string(w.rank) + ":\n" + w.problems;
}

}  // namespace chorus::test::device_scenarios
