// NCCL's stream semantics for collectives on device buffers. The caller's thread only enqueues: it records an
// event on the caller's stream (the inputs are ready once the stream reaches it) and makes the stream wait until
// a flag in pinned memory reaches the call's number. A progress thread then takes the calls in order, waits for
// each one's event, runs the collective, and raises the flag, so that work enqueued on the stream after the call
// runs once the result is in place. The flag is raised after failures too: a stream never hangs on Chorus.
//
// Blocking mode, for where a held stream could hold the call's own device work behind it (stream_hold_hazard.h):
// the stream is not held; the caller's thread waits until the progress thread has run the call, so that work it
// enqueues afterwards finds the result in place, and gets the call's failure as an exception.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <span>
#include <mutex>
#include <thread>
#include <vector>

#include "core/collective.h"
#include "device/device_api.h"

namespace chorus {

class DeviceCallQueue {
 public:
  // Runs one call on the progress thread. waitReady() returns once the caller's stream has reached the call, and
  // throws on abort, timeout or a failed stream; the runner records failures itself and throws them.
  // A call is one CallArgs, or a group's calls on one communicator (run together, as CommEngine::runBatch runs them).
  using Runner = std::function<void(std::span<const CallArgs> ops, int device, const std::function<void()>& waitReady)>;

  // `aborted` and `timeoutSeconds` (0: forever) bound the waits for the caller's streams. blocking: enqueue()
  // returns once the call has run (see above).
  DeviceCallQueue(DeviceApi& api, int rank, Runner runner, const std::atomic<bool>& aborted, double timeoutSeconds,
                  bool blocking = false);
  // Runs (or, after an abort, fails) every queued call, stops the progress thread, and frees the flag once every
  // stream has passed its waits on it.
  ~DeviceCallQueue();
  DeviceCallQueue(const DeviceCallQueue&) = delete;
  DeviceCallQueue& operator=(const DeviceCallQueue&) = delete;

  // Enqueues `op` behind the work already on `stream` (nullptr: the legacy default stream) of GPU `device`, and
  // returns at once. Throws chorusUnhandledCudaError when the runtime refuses the event or the wait; nothing is
  // enqueued then. Blocking: returns once the call has run, and throws what it failed with.
  void enqueue(std::span<const CallArgs> ops, DeviceStream stream, int device);
  // Blocks until every call enqueued so far has finished (succeeded or failed).
  void drain();

 private:
  struct Call {
    std::vector<CallArgs> ops;
    DeviceStream stream;
    int device;
    uint64_t number;
    DeviceEvent ready;   // recorded before the stream's wait: the inputs are in place
    DeviceEvent passed;  // recorded after it: the stream no longer reads the flag for this call (null: unknown)
  };
  void enqueueHeld(Call call, const CallArgs& op);
  // Hands the call to the progress thread; returns its number. Under mutex_.
  uint64_t queueCall(Call call);
  void runCalls();
  void waitReady(const Call& call);
  // An event from the pool, or a new one; recycles retired events whose stream has passed them. Under mutex_.
  DeviceEvent takeEvent();
  // Waits (bounded) until the streams have passed their waits on the flag, then frees events and flag.
  void releaseDeviceState();

  DeviceApi& api_;
  const int rank_;
  Runner runner_;
  const std::atomic<bool>& aborted_;
  const double timeoutSeconds_;
  const bool blocking_;
  uint32_t* flag_ = nullptr;    // pinned; the number of the last call finished
  bool flagStillRead_ = false;  // a stream may read the flag at any time: never free it

  std::mutex mutex_;
  std::condition_variable callArrived_;
  std::condition_variable callFinished_;
  std::deque<Call> calls_;
  uint64_t enqueued_ = 0;
  uint64_t finished_ = 0;
  bool stopping_ = false;
  std::vector<DeviceEvent> freeEvents_;
  std::deque<DeviceEvent> retiring_;  // `passed` events of finished calls, oldest first
  uint64_t failedCall_ = 0;           // blocking: the number of the last call that failed, and its failure
  std::exception_ptr failure_;
  std::thread progress_;
};

}  // namespace chorus
