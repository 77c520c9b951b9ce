// The emulated device's streams and events: a stream is an in-order queue of work run by a worker thread, so that
// what the CUDA runtime does asynchronously (copies, event records, waits) is asynchronous and ordered here too.
// Waits block the queue's worker (on a condition variable, or a sleeping poll for flags nobody signals), never the
// thread that enqueued them.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace chorus {

// What an event knows: how many records were made and how many have run; shared between the event handle and
// the work items that refer to it, so that destroying an event with a pending record or wait is safe (as in CUDA).
class EmulatedEventState {
 public:
  // Starts a new record and returns its number; the event is not done until markDone(number) runs.
  uint64_t beginRecord();
  // Marks records up to `number` run; `error` (empty when none) is what the recording stream had failed with.
  void markDone(uint64_t number, const std::string& error);
  // The number of the latest record (0: never recorded).
  uint64_t latestRecord();
  // True when the latest record has run; throws chorusUnhandledCudaError if its stream had failed.
  bool done();
  // Blocks until record `number` has run.
  void waitFor(uint64_t number);

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  uint64_t recorded_ = 0;
  uint64_t completed_ = 0;
  std::string error_;
};

// One hardware queue of the emulated device: a worker thread that runs, in order, the work of every stream placed
// on it. Each stream has a queue of its own unless CUDA_DEVICE_MAX_CONNECTIONS is set: then, as on a GPU, the
// streams share that many queues round robin, and a wait at the head of a queue holds every stream behind it
// (device/stream_hold_hazard.h).
class EmulatedQueue {
 public:
  // Starts the worker thread and returns once it runs its loop.
  EmulatedQueue();
  // Runs the queued work, then stops the worker.
  ~EmulatedQueue();
  EmulatedQueue(const EmulatedQueue&) = delete;
  EmulatedQueue& operator=(const EmulatedQueue&) = delete;

  // Appends work; it runs after everything enqueued before it. Work must not throw.
  void enqueue(std::function<void()> work);
  // The process that created the queue: a fork's child has no worker thread behind it.
  pid_t ownerPid() const { return ownerPid_; }

 private:
  void runWorker();

  const pid_t ownerPid_;
  std::mutex mutex_;
  std::condition_variable workArrived_;
  std::condition_variable started_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  bool running_ = false;  // the worker has reached its loop (set once, under mutex_)
  std::thread worker_;
};

class EmulatedStream {
 public:
  // `name` appears in messages ("stream 0x..." or "legacy default stream"); queue null: a queue of its own.
  EmulatedStream(std::string name, std::shared_ptr<EmulatedQueue> queue);
  // Waits for the work enqueued on this stream to run (a queue of its own is then stopped).
  ~EmulatedStream();
  EmulatedStream(const EmulatedStream&) = delete;
  EmulatedStream& operator=(const EmulatedStream&) = delete;

  // Appends work to the stream's queue; it runs after everything enqueued before it. Work that throws makes the
  // stream failed (the first message is kept); later work still runs, as CUDA streams keep running after a fault.
  void enqueue(std::function<void()> work);
  // Blocks until everything enqueued so far has run; throws chorusUnhandledCudaError if the stream has failed.
  void synchronize();
  // The first failure's message, or "" (for events recorded on this stream).
  std::string error();
  // The process that created the stream: a fork's child has no worker thread behind it.
  pid_t ownerPid() const { return queue_->ownerPid(); }
  const std::string& name() const { return name_; }

 private:
  const std::string name_;
  std::shared_ptr<EmulatedQueue> queue_;
  std::mutex mutex_;
  std::condition_variable workDone_;
  uint64_t enqueued_ = 0;
  uint64_t completed_ = 0;
  std::string error_;
};

}  // namespace chorus
