// The emulated GPU runtime (emulated_device_api.h): DeviceApi in host memory and threads, so that the device paths
// run and are tested on machines without a GPU (CHORUS_DEVICE_EMULATION=1).
#include "emulation/device/emulated_device_api.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>

#include "core/error.h"
#include "device/poll_backoff.h"
#include "device/stream_hold_hazard.h"
#include "emulation/device/emulated_stream.h"

namespace chorus {
// Named rather than anonymous: the Impl below holds these types, and unity builds would warn (subobject-linkage).
namespace emulated_device_detail {

std::string describeHandle(const char* what, const void* handle) {
  std::ostringstream os;
  os << "emulated device " << what << " (handle " << handle << ")";
  return os.str();
}

// The reducer of one stream: the host reducer, once the stream has run what was enqueued before the reduction
// (the copies that fill its inputs), so that reduce() sees the same data a kernel launched on the stream would.
class StreamOrderedHostReducer final : public Reducer {
 public:
  StreamOrderedHostReducer(DeviceApi& api, DeviceStream stream) : api_(api), stream_(stream) {}
  void reduce(void* dst, const void* a, const void* b, size_t count, chorusDataType_t type, chorusRedOp_t op) override {
    api_.synchronize(stream_);
    hostReducer().reduce(dst, a, b, count, type, op);
  }
  void finishAverage(void* data, size_t count, chorusDataType_t type, int nranks) override {
    api_.synchronize(stream_);
    hostReducer().finishAverage(data, count, type, nranks);
  }

 private:
  DeviceApi& api_;
  DeviceStream stream_;
};

std::string streamName(const void* handle) {
  if (handle == nullptr) return "legacy default stream";
  std::ostringstream os;
  os << "stream " << handle;
  return os.str();
}

}  // namespace emulated_device_detail

// A stream's handle is its entry's address (nullptr for the legacy default stream).
struct EmulatedDeviceApi::StreamEntry {
  StreamEntry(DeviceApi& api, bool legacyDefault, std::shared_ptr<EmulatedQueue> queue)
      : stream(emulated_device_detail::streamName(legacyDefault ? nullptr : this), std::move(queue)),
        reducer(api, legacyDefault ? nullptr : this) {}
  EmulatedStream stream;
  emulated_device_detail::StreamOrderedHostReducer reducer;
};

namespace {
// Queues inherited from a fork's parent have no worker thread in the child: destroying one would join a thread
// that is not there. They are kept, reachable, for the life of the process.
void keepInheritedQueues(std::vector<std::shared_ptr<EmulatedQueue>> queues) {
  static auto* kept = new std::vector<std::shared_ptr<EmulatedQueue>>;
  for (auto& q : queues) kept->push_back(std::move(q));
}
}  // namespace

EmulatedDeviceApi::EmulatedDeviceApi() = default;

EmulatedDeviceApi::~EmulatedDeviceApi() {
  streams_.clear();
  // A default stream or queues inherited from a fork's parent have no worker to stop: they are left alone.
  if (defaultStreamPid_ != getpid()) (void)defaultStream_.release();
  if (sharedQueuesPid_ != getpid()) keepInheritedQueues(std::move(sharedQueues_));
}

std::shared_ptr<EmulatedQueue> EmulatedDeviceApi::nextQueue() {
  const int connections = deviceMaxConnectionsFromEnv();
  if (connections == 0) return nullptr;
  const pid_t pid = getpid();
  if (sharedQueuesPid_ != pid) {
    keepInheritedQueues(std::move(sharedQueues_));  // the parent's: no worker here to stop
    sharedQueues_.clear();
    sharedQueuesPid_ = pid;
    nextSharedQueue_ = 0;
  }
  if (sharedQueues_.size() < static_cast<size_t>(connections)) {
    sharedQueues_.push_back(std::make_shared<EmulatedQueue>());
    return sharedQueues_.back();
  }
  return sharedQueues_[nextSharedQueue_++ % sharedQueues_.size()];
}

std::string EmulatedDeviceApi::streamHoldHazard(int) { return chorus::streamHoldHazard(false); }

MemoryLocation EmulatedDeviceApi::locate(const void* p, int* device) {
  if (p == nullptr || !memory_.contains(p)) return MemoryLocation::kHost;
  if (device != nullptr) *device = 0;
  return MemoryLocation::kDevice;
}

void EmulatedDeviceApi::setDevice(int device) {
  if (device != 0) {
    throw Error(chorusUnhandledCudaError, "emulated device: setDevice(" + std::to_string(device) +
                                              ") failed: invalid device ordinal (the emulation has device 0 only)");
  }
}

void* EmulatedDeviceApi::pinnedAlloc(size_t bytes) {
  if (bytes == 0) return nullptr;
  constexpr size_t kAlignment = 4096;  // page-aligned, as cudaHostAlloc's memory is
  void* p = std::aligned_alloc(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
  if (p == nullptr)
    throwSystemError("emulated pinned allocation of " + std::to_string(bytes) + " bytes", "aligned_alloc", ENOMEM);
  return p;
}

void EmulatedDeviceApi::pinnedFree(void* p) { std::free(p); }

EmulatedDeviceApi::StreamEntry& EmulatedDeviceApi::stream(DeviceStream s, const char* what) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (s == nullptr) {
    const pid_t pid = getpid();
    if (!defaultStream_ || defaultStreamPid_ != pid) {
      // A fork's child inherits the parent's stream objects but not their worker threads: it gets its own.
      (void)defaultStream_.release();
      defaultStream_ = std::make_unique<StreamEntry>(*this, true, nextQueue());
      defaultStreamPid_ = pid;
    }
    return *defaultStream_;
  }
  auto it = streams_.find(s);
  if (it == streams_.end()) {
    throw Error(chorusUnhandledCudaError, emulated_device_detail::describeHandle(what, s) +
                                              ": not a stream of the emulated device "
                                              "(invalid resource handle)");
  }
  if (it->second->stream.ownerPid() != getpid()) {
    throw Error(chorusUnhandledCudaError, emulated_device_detail::describeHandle(what, s) +
                                              ": the stream was created in process " +
                                              std::to_string(it->second->stream.ownerPid()) + " before a fork");
  }
  return *it->second;
}

std::shared_ptr<EmulatedEventState> EmulatedDeviceApi::event(DeviceEvent e, const char* what) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = events_.find(e);
  if (it == events_.end()) {
    throw Error(chorusUnhandledCudaError, emulated_device_detail::describeHandle(what, e) +
                                              ": not an event of the emulated device "
                                              "(invalid resource handle)");
  }
  return it->second;
}

DeviceStream EmulatedDeviceApi::createStream() {
  std::lock_guard<std::mutex> lock(mutex_);
  auto entry = std::make_unique<StreamEntry>(*this, false, nextQueue());
  DeviceStream handle = entry.get();
  streams_.emplace(handle, std::move(entry));
  return handle;
}

void EmulatedDeviceApi::destroyStream(DeviceStream s) {
  if (s == nullptr) return;    // the legacy default stream is never destroyed
  stream(s, "destroyStream");  // validates
  std::unique_ptr<StreamEntry> entry;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = streams_.find(s);
    entry = std::move(it->second);
    streams_.erase(it);
  }
  entry.reset();  // drains and joins outside the lock
}

void EmulatedDeviceApi::copyAsync(void* dst, const void* src, size_t bytes, DeviceStream s) {
  StreamEntry& entry = stream(s, "copyAsync");
  if (bytes == 0) return;
  if (dst == nullptr || src == nullptr) {
    std::ostringstream os;
    os << "emulated device: copyAsync of " << bytes << " bytes from " << src << " to " << dst << " on "
       << entry.stream.name() << " failed: invalid argument (null pointer)";
    throw Error(chorusUnhandledCudaError, os.str());
  }
  entry.stream.enqueue([dst, src, bytes] { std::memmove(dst, src, bytes); });
}

void EmulatedDeviceApi::synchronize(DeviceStream s) { stream(s, "synchronize").stream.synchronize(); }

DeviceEvent EmulatedDeviceApi::createEvent() {
  auto state = std::make_shared<EmulatedEventState>();
  DeviceEvent handle = state.get();
  std::lock_guard<std::mutex> lock(mutex_);
  events_.emplace(handle, std::move(state));
  return handle;
}

void EmulatedDeviceApi::destroyEvent(DeviceEvent e) {
  if (e == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  // Work already enqueued that refers to the event keeps its state alive.
  events_.erase(e);
}

void EmulatedDeviceApi::recordEvent(DeviceEvent e, DeviceStream s) {
  std::shared_ptr<EmulatedEventState> state = event(e, "recordEvent");
  StreamEntry& entry = stream(s, "recordEvent");
  const uint64_t number = state->beginRecord();
  EmulatedStream* target = &entry.stream;
  entry.stream.enqueue([state, number, target] { state->markDone(number, target->error()); });
}

bool EmulatedDeviceApi::eventDone(DeviceEvent e) { return event(e, "eventDone")->done(); }

void EmulatedDeviceApi::streamWaitEvent(DeviceStream s, DeviceEvent e) {
  std::shared_ptr<EmulatedEventState> state = event(e, "streamWaitEvent");
  StreamEntry& entry = stream(s, "streamWaitEvent");
  const uint64_t number = state->latestRecord();
  if (number == 0) return;  // never recorded: nothing to wait for, as in CUDA
  entry.stream.enqueue([state, number] { state->waitFor(number); });
}

void EmulatedDeviceApi::streamWaitFlag(DeviceStream s, const uint32_t* flag, uint32_t value) {
  StreamEntry& entry = stream(s, "streamWaitFlag");
  if (flag == nullptr) throw Error(chorusUnhandledCudaError, "emulated device: streamWaitFlag on a null flag");
  // Nobody signals the flag (the host only stores to it, as it would for a GPU polling pinned memory), so the
  // worker polls it, sleeping longer the longer it waits. The comparison is cyclic, as CU_STREAM_WAIT_VALUE_GEQ's:
  // a counter that wraps past 2^32 still compares as later.
  entry.stream.enqueue([flag, value] {
    // Sleeps on the flag's futex, for a period that grows while nothing happens: raiseStreamFlag wakes it at once,
    // a plain store is seen at the latest when the period ends.
    PollBackoff backoff;
    for (;;) {
      const uint32_t seen = __atomic_load_n(flag, __ATOMIC_ACQUIRE);
      if (static_cast<int32_t>(seen - value) >= 0) return;
      const timespec period = backoff.nextSleep();
      if (period.tv_sec == 0 && period.tv_nsec == 0) continue;
      // EAGAIN (the flag moved), EINTR and ETIMEDOUT all mean: look again.
      syscall(SYS_futex, flag, FUTEX_WAIT_PRIVATE, seen, &period, nullptr, 0);
    }
  });
}

void EmulatedDeviceApi::streamWriteFlag(DeviceStream s, uint32_t* flag, uint32_t value) {
  StreamEntry& entry = stream(s, "streamWriteFlag");
  if (flag == nullptr) throw Error(chorusUnhandledCudaError, "emulated device: streamWriteFlag on a null flag");
  // The worker ran the stream's earlier copies itself: the release store publishes their bytes with the flag.
  // Waiters in this process wake at once; those of another process see it at their next poll.
  entry.stream.enqueue([flag, value] {
    __atomic_store_n(flag, value, __ATOMIC_RELEASE);
    wakeFlagWaiters(flag);
  });
}

void EmulatedDeviceApi::wakeFlagWaiters(const uint32_t* flag) {
  syscall(SYS_futex, flag, FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

Reducer& EmulatedDeviceApi::reducer(DeviceStream s) { return stream(s, "reducer").reducer; }

}  // namespace chorus
