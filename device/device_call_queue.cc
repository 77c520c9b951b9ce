#include "device/device_call_queue.h"

#include <pthread.h>

#include <cstring>
#include <sstream>
#include <utility>

#include "core/deadline.h"
#include "core/deadline_wait.h"
#include "core/error.h"
#include "core/logging.h"
#include "device/poll_backoff.h"
#include "device/stream_flag.h"

// g++ says __SANITIZE_ADDRESS__ under ASan; clang 14 says it through __has_feature.
#if defined(__SANITIZE_ADDRESS__)
#define CHORUS_LEAK_CHECKED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CHORUS_LEAK_CHECKED 1
#endif
#endif
#ifdef CHORUS_LEAK_CHECKED
#include <sanitizer/lsan_interface.h>
#endif

namespace chorus {
namespace {

// A flag a stream may still read is never freed; leak checkers are told that this one is meant.
void keepForever(const void* p) {
#ifdef CHORUS_LEAK_CHECKED
  __lsan_ignore_object(p);
#else
  (void)p;
#endif
}

// Makes `device` current on the calling thread for a scope (events belong to the device current at creation and
// must be recorded on streams of that device), restoring the previous one.
class ScopedApiDevice {
 public:
  ScopedApiDevice(DeviceApi& api, int device) : api_(api) {
    const int current = api_.currentDevice();
    if (device >= 0 && current != device) {
      api_.setDevice(device);
      previous_ = current;
    }
  }
  ~ScopedApiDevice() {
    if (previous_ < 0) return;
    try {
      api_.setDevice(previous_);
    } catch (...) {
      // A destructor cannot report it; the next call on this thread will meet the same runtime error.
    }
  }
  ScopedApiDevice(const ScopedApiDevice&) = delete;
  ScopedApiDevice& operator=(const ScopedApiDevice&) = delete;

 private:
  DeviceApi& api_;
  int previous_ = -1;
};

std::string streamName(DeviceStream s) {
  if (s == nullptr) return "the legacy default stream";
  std::ostringstream os;
  os << "stream " << s;
  return os.str();
}

}  // namespace

DeviceCallQueue::DeviceCallQueue(DeviceApi& api, int rank, Runner runner, const std::atomic<bool>& aborted,
                                 double timeoutSeconds, bool blocking)
    : api_(api),
      rank_(rank),
      runner_(std::move(runner)),
      aborted_(aborted),
      timeoutSeconds_(timeoutSeconds),
      blocking_(blocking) {
  // A cache line of its own: the device polls it while the host writes next to nothing else.
  flag_ = static_cast<uint32_t*>(api_.pinnedAlloc(64));
  std::memset(flag_, 0, 64);
  progress_ = std::thread([this] { runCalls(); });
}

DeviceCallQueue::~DeviceCallQueue() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  callArrived_.notify_all();
  if (progress_.joinable()) progress_.join();
  releaseDeviceState();
}

DeviceEvent DeviceCallQueue::takeEvent() {
  while (!retiring_.empty()) {
    bool passed = false;
    try {
      passed = api_.eventDone(retiring_.front());
    } catch (const Error&) {
      // The stream failed; the event itself is still an event and can be recorded again.
      passed = true;
    }
    if (!passed) break;
    freeEvents_.push_back(retiring_.front());
    retiring_.pop_front();
  }
  if (!freeEvents_.empty()) {
    DeviceEvent e = freeEvents_.back();
    freeEvents_.pop_back();
    return e;
  }
  return api_.createEvent();
}

void DeviceCallQueue::enqueue(std::span<const CallArgs> ops, DeviceStream stream, int device) {
  std::unique_lock<std::mutex> lock(mutex_);
  Call call;
  {
    ScopedApiDevice onDevice(api_, device);
    call = Call{std::vector<CallArgs>(ops.begin(), ops.end()), stream, device, enqueued_ + 1, takeEvent(), nullptr};
    try {
      api_.recordEvent(call.ready, stream);
      if (!blocking_) api_.streamWaitFlag(stream, flag_, static_cast<uint32_t>(call.number));
    } catch (...) {
      freeEvents_.push_back(call.ready);
      throw;
    }
    if (!blocking_) {
      enqueueHeld(std::move(call), ops.front());
      return;
    }
  }
  const uint64_t number = queueCall(std::move(call));
  callFinished_.wait(lock, [&] { return finished_ >= number; });
  if (failedCall_ == number && failure_) std::rethrow_exception(std::exchange(failure_, nullptr));
}

void DeviceCallQueue::enqueueHeld(Call call, const CallArgs& op) {
  // From here the stream waits for the flag: the call must be queued whatever happens, or the stream would hang.
  try {
    call.passed = takeEvent();
    api_.recordEvent(call.passed, call.stream);
  } catch (const std::exception& e) {
    if (call.passed != nullptr) freeEvents_.push_back(call.passed);
    call.passed = nullptr;
    flagStillRead_ = true;
    CHORUS_WARN(rank_, "device " << collectiveName(op.collective) << ": recording its completion on "
                                 << streamName(call.stream) << " failed (" << e.what()
                                 << "); the stream flag will not be freed");
  }
  queueCall(std::move(call));
}

uint64_t DeviceCallQueue::queueCall(Call call) {
  enqueued_ = call.number;
  calls_.push_back(std::move(call));
  callArrived_.notify_one();
  return enqueued_;
}

void DeviceCallQueue::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  const uint64_t target = enqueued_;
  callFinished_.wait(lock, [&] { return finished_ >= target; });
}

void DeviceCallQueue::waitReady(const Call& call) {
  const Deadline deadline = Deadline::after(timeoutSeconds_);
  PollBackoff backoff;
  while (!api_.eventDone(call.ready)) {
    if (aborted_.load(std::memory_order_relaxed)) {
      // The communicator adds the call's name (with its sequence number, which is given when it runs).
      throw Error(chorusRemoteError,
                  errorContext(rank_) + ": aborted by chorusCommAbort while waiting for " + streamName(call.stream) +
                      " to reach the call",
                  Failure::kAborted);
    }
    pauseWithin(deadline, backoff, [&] {
      return errorContext(rank_) + ": the work enqueued on " + streamName(call.stream) +
             " before the call did not finish within CHORUS_TIMEOUT";
    });
  }
}

void DeviceCallQueue::runCalls() {
  pthread_setname_np(pthread_self(), "chorus-device");
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    // Stopping still runs what was queued: every stream waiting on the flag gets it raised.
    callArrived_.wait(lock, [&] { return stopping_ || !calls_.empty(); });
    if (calls_.empty()) return;
    Call call = calls_.front();
    calls_.pop_front();
    lock.unlock();
    std::exception_ptr failure;
    try {
      runner_(call.ops, call.device, [&] { waitReady(call); });
    } catch (const std::exception& e) {
      // The runner has recorded the failure (last error, async error); a stream-ordered caller learns it from
      // those, a blocked one gets it thrown as well.
      CHORUS_INFO(rank_, "device call failed: " << e.what());
      failure = std::current_exception();
    } catch (...) {
      CHORUS_WARN(rank_, "device " << collectiveName(call.ops.front().collective)
                                   << " failed with an unknown exception");
      failure = std::current_exception();
    }
    if (!blocking_) raiseStreamFlag(api_, flag_, static_cast<uint32_t>(call.number));
    lock.lock();
    if (blocking_ && failure) {
      failedCall_ = call.number;
      failure_ = failure;
    }
    freeEvents_.push_back(call.ready);
    if (call.passed != nullptr) retiring_.push_back(call.passed);
    finished_ = call.number;
    callFinished_.notify_all();
  }
}

void DeviceCallQueue::releaseDeviceState() {
  // The streams read the flag until they pass their waits; freeing it earlier would leave them reading freed
  // memory. A stream held up by the caller's own work past the timeout keeps the flag (a few bytes) forever.
  const Deadline deadline = Deadline::after(timeoutSeconds_);
  PollBackoff backoff;
  while (!retiring_.empty()) {
    bool passed = false;
    try {
      passed = api_.eventDone(retiring_.front());
    } catch (const Error&) {
      passed = true;  // a failed stream reads nothing more
    }
    if (passed) {
      freeEvents_.push_back(retiring_.front());
      retiring_.pop_front();
      backoff.reset();
      continue;
    }
    if (deadline.expired() || aborted_.load()) {
      flagStillRead_ = true;
      CHORUS_WARN(rank_,
                  "communicator destroyed while a stream has not yet passed its wait on a device call; "
                  "its flag is left allocated");
      break;
    }
    backoff.pause();
  }
  try {
    for (DeviceEvent e : freeEvents_) api_.destroyEvent(e);
    if (!flagStillRead_) {
      api_.pinnedFree(flag_);
    } else {
      keepForever(flag_);
    }
  } catch (const std::exception& e) {
    CHORUS_WARN(rank_, "releasing device call state: " << e.what());
  }
}

}  // namespace chorus
