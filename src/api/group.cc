// A thread's group: the calls recorded since its outermost chorusGroupStart. At the outermost chorusGroupEnd they
// run per communicator, each communicator's calls as one batch (CommEngine::runBatch: its sends and receives
// posted together, then its collectives in call order), the communicators one after another in the order of their
// identities, which every rank sees alike. That order cannot deadlock: the first communicator in it with work left
// has every rank that takes part in it working on it, since they have finished every communicator before it.
#include "src/api/group.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "src/api/api_errors.h"
#include "src/api/argument_checks.h"
#include "src/api/comm_handle.h"
#include "src/api/host_stream.h"

namespace chorus::api {
namespace {

struct RecordedCall {
  chorusComm_t comm;
  CallArgs args;
  bool device;
  int gpu;
  chorusStream_t stream;
  std::shared_ptr<const WindowOp> window;  // a window call (args unused)
};

struct GroupState {
  int depth = 0;
  std::vector<RecordedCall> calls;
  std::string failure;  // the first failed call's message: the group is dropped at its end
};

thread_local GroupState group;

// A part with window calls (host memory only): its puts and signals, its other calls, its waits, in that order.
chorusResult_t runWithWindows(chorusComm_t comm, chorusStream_t streamHandle, const std::vector<WindowOp>& puts,
                              const std::vector<CallArgs>& others, const std::vector<WindowOp>& waits);

// Runs one communicator's part of a group, or queues it on the host stream its calls name; returns its result (the
// communicator has recorded any error).
chorusResult_t runPart(chorusComm_t comm, const std::vector<const RecordedCall*>& calls) {
  const std::string where = checks::whereOf(comm, "chorusGroupEnd");
  thread_local std::vector<CallArgs> host;  // reused: a group per training step should not allocate
  std::vector<WindowOp> puts, waits;
  host.clear();
  for (const RecordedCall* c : calls) {
    if (c->window) {
      if (c->stream != calls.front()->stream) {
        return fail(comm, chorusInvalidUsage, where + "a group's calls on one communicator must use one stream");
      }
      (c->window->kind == WindowOp::Kind::kWait ? waits : puts).push_back(*c->window);
      continue;
    }
    if (c->stream != calls.front()->stream) {
      return fail(comm, chorusInvalidUsage, where + "a group's calls on one communicator must use one stream");
    }
    if (c->device != calls.front()->device) {
      return fail(comm, chorusInvalidUsage,
                  where + "a group's calls on one communicator must all use device buffers or all host buffers");
    }
    host.push_back(c->args);
  }
  if (!puts.empty() || !waits.empty()) {
    if (calls.front()->device) {
      return fail(comm, chorusInvalidUsage,
                  where + "window calls take host memory: their group cannot hold device calls");
    }
    return runWithWindows(comm, calls.front()->stream, puts, host, waits);
  }
  if (calls.front()->device) {
    // Device buffers: the group's calls are enqueued together on their stream, run together by the progress thread.
    int gpu = -1;
    for (const RecordedCall* c : calls) {
      if (c->gpu >= 0) gpu = c->gpu;
    }
    return guarded(comm, "chorusGroupEnd", [&] { comm->impl->enqueueDeviceBatch(host, calls.front()->stream, gpu); });
  }
  return guarded(comm, "chorusGroupEnd", [&] {
    std::shared_ptr<HostStream> stream = hostStreamOf(calls.front()->stream, "chorusGroupEnd");
    if (!stream) {
      comm->impl->runBatch(host);
      return;
    }
    const StreamStatus queued = stream->enqueue(*comm->impl, host);
    if (queued.code != chorusSuccess) throw Error(queued.code, queued.message);
  });
}

chorusResult_t runWithWindows(chorusComm_t comm, chorusStream_t streamHandle, const std::vector<WindowOp>& puts,
                              const std::vector<CallArgs>& others, const std::vector<WindowOp>& waits) {
  return guarded(comm, "chorusGroupEnd", [&] {
    std::shared_ptr<HostStream> stream = hostStreamOf(streamHandle, "chorusGroupEnd");
    auto check = [](const StreamStatus& queued) {
      if (queued.code != chorusSuccess) throw Error(queued.code, queued.message);
    };
    if (!stream) {
      if (!puts.empty()) comm->impl->runWindowOps(puts);
      if (!others.empty()) comm->impl->runBatch(others);
      if (!waits.empty()) comm->impl->runWindowOps(waits);
      return;
    }
    if (!puts.empty()) check(stream->enqueueWindow(*comm->impl, puts));
    if (!others.empty()) check(stream->enqueue(*comm->impl, others));
    if (!waits.empty()) check(stream->enqueueWindow(*comm->impl, waits));
  });
}

}  // namespace

bool inGroup() { return group.depth > 0; }

void recordInGroup(chorusComm_t comm, const CallArgs& op, bool device, int gpu, chorusStream_t stream) {
  group.calls.push_back(RecordedCall{comm, op, device, gpu, stream, nullptr});
}

void recordWindowInGroup(chorusComm_t comm, WindowOp op, chorusStream_t stream) {
  group.calls.push_back(
      RecordedCall{comm, CallArgs{}, false, -1, stream, std::make_shared<const WindowOp>(std::move(op))});
}

void recordGroupFailure(const std::string& message) {
  if (group.failure.empty()) group.failure = message;
}

chorusResult_t groupStart() {
  ++group.depth;
  return chorusSuccess;
}

chorusResult_t groupEnd() {
  if (group.depth == 0) return fail(nullptr, chorusInvalidUsage, "chorusGroupEnd without a chorusGroupStart");
  if (--group.depth > 0) return chorusSuccess;
  // The group's calls, in a buffer this thread keeps (cleared when done, its capacity kept).
  thread_local std::vector<RecordedCall> calls;
  calls.swap(group.calls);
  struct Cleared {
    ~Cleared() { calls.clear(); }
  } cleared;
  if (!group.failure.empty()) {
    const std::string failure = std::move(group.failure);
    group.failure.clear();
    return fail(nullptr, chorusInvalidUsage,
                "chorusGroupEnd: the group's calls were dropped, since one of them failed: " + failure);
  }
  // The communicators in identity order; each one's calls in call order.
  thread_local std::vector<chorusComm_t> comms;
  comms.clear();
  for (const RecordedCall& c : calls) {
    if (std::find(comms.begin(), comms.end(), c.comm) == comms.end()) comms.push_back(c.comm);
  }
  if (comms.size() > 1) {
    std::stable_sort(comms.begin(), comms.end(), [](chorusComm_t a, chorusComm_t b) {
      return a->impl->identity() < b->impl->identity();
    });
  }
  chorusResult_t first = chorusSuccess;
  std::string firstMessage;
  thread_local std::vector<const RecordedCall*> part;
  for (chorusComm_t comm : comms) {
    part.clear();
    for (const RecordedCall& c : calls) {
      if (c.comm == comm) part.push_back(&c);
    }
    // A failed part does not stop the others: their peers would otherwise wait for this rank until the timeout.
    const chorusResult_t result = runPart(comm, part);
    if (result != chorusSuccess && first == chorusSuccess) {
      first = result;
      firstMessage = threadLastError();
    }
  }
  if (first != chorusSuccess) fail(nullptr, first, firstMessage);
  return first;
}

}  // namespace chorus::api
