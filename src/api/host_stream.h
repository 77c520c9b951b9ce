// Host streams: non-blocking host calls. A host stream is a queue with a thread of its own; a call made with it
// is issued on its communicator at once (call_order.h: communicators run their host calls in issue order)
// and runs in the background, in order with the stream's other calls. A failed call fails the stream's later
// calls; synchronize, query and events return its error. A caller waiting on a stream runs its queued calls itself
// rather than wait for the stream's thread to wake up, so that waiting right after queuing costs about a blocking
// call. While callers do so (each call waited for as soon as it is queued: a blocking call through torch), the
// stream's thread neither spins nor is woken per call: it would take a core from the ranks running the calls.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "chorus/chorus.h"
#include "core/collective.h"
#include "src/comm/window_op.h"

namespace chorus {
class CommEngine;
}

namespace chorus::api {

// A result code and what happened.
struct StreamStatus {
  chorusResult_t code = chorusSuccess;
  std::string message;
};

class HostStream {
 public:
  HostStream();
  // Runs what is queued, then stops the thread.
  ~HostStream();
  HostStream(const HostStream&) = delete;
  HostStream& operator=(const HostStream&) = delete;

  // Issues `ops` (one call, or a group's calls on one communicator) on `engine` and queues them. Returns the
  // stream's error, queuing nothing, once one of its calls has failed.
  StreamStatus enqueue(CommEngine& engine, std::span<const CallArgs> ops);
  // As enqueue, for window ops (puts, signals, waits: CommEngine::runWindowIssued).
  StreamStatus enqueueWindow(CommEngine& engine, std::span<const WindowOp> ops);
  // How many calls were queued so far (an event records this).
  uint64_t enqueued();
  // Waits until the first `target` calls have finished, running queued ones on this thread when the stream's own
  // thread has not taken them yet; returns the first error among them.
  StreamStatus waitFor(uint64_t target);
  // chorusInProgress while any of the first `target` calls is unfinished, else as waitFor.
  StreamStatus query(uint64_t target);

 private:
  struct Queued {
    CommEngine* engine;
    uint64_t number;  // its issue number on the engine
    std::vector<CallArgs> ops;
    std::vector<WindowOp> windowOps;  // a window call's instead of ops
  };
  void threadMain();
  // After queuing a call (under mutex_): wakes the stream's thread unless the call is left to its caller.
  void wakeWorkerForNewCall();
  // Takes the next call and runs it (or skips it after a failure) with mutex_ released; mutex_ held on entry and
  // exit.
  void runNext(std::unique_lock<std::mutex>& lock, bool byCaller);
  StreamStatus statusUpTo(uint64_t target) const;  // under mutex_
  // Records a change of the queue or of a call's state (under mutex_).
  void changed() { version_.fetch_add(1, std::memory_order_release); }
  // Releases mutex_ and yields for a while, unless something changes; true when something did. A short wait then
  // costs no futex wakeup on either side (which takes microseconds here), a long one sleeps.
  bool spinUntilChanged(std::unique_lock<std::mutex>& lock);
  static constexpr int kSpinRounds = 100;
  // How long the stream's thread leaves a new call to its caller, who runs it itself if it starts waiting meanwhile
  // (a blocking call through torch reaches its wait 1-3 us after queuing it). Timed, not counted in yields: a yield
  // takes 0.1-1 us here depending on what else runs, and a thread that takes the call first makes the caller sleep.
  static constexpr std::chrono::microseconds kPickupWindow{20};
  // While callers run the calls (callersRun_), the stream's thread sleeps in periods of kCallersRunCheck and takes a
  // call that no caller took meanwhile: a call left to the background then starts at most this late, and the stream
  // goes back to waking its thread per call. After kIdleChecks periods without a call it sleeps until woken.
  static constexpr std::chrono::milliseconds kCallersRunCheck{10};
  static constexpr int kIdleChecks = 20;

  std::mutex mutex_;
  std::condition_variable workArrived_;   // the stream's thread waits here for calls to run
  std::condition_variable callFinished_;  // callers waiting on the stream wait here
  std::atomic<int> waiters_{0};           // callers inside waitFor (changed under mutex_)
  int sleepingWaiters_ = 0;               // of them, those asleep on callFinished_
  bool workerSleeping_ = false;           // the stream's thread is asleep on workArrived_
  bool workerLooksBack_ = false;          // ... for at most kCallersRunCheck, after which it looks at the queue
  std::atomic<uint64_t> version_{0};      // bumped by changed()
  std::deque<Queued> queue_;
  bool busy_ = false;  // a call is running (on the stream's thread or a waiting caller's)
  // The last call was run by a caller waiting for it: new calls are left to their callers rather than handed to
  // the stream's thread.
  bool callersRun_ = false;
  bool stopping_ = false;
  uint64_t enqueued_ = 0, finished_ = 0;
  uint64_t failedAt_ = UINT64_MAX;  // the index of the first failed call
  StreamStatus failure_;
  std::thread thread_;
};

// Host stream handles: tagged numbers, never pointers, so that they cannot be taken for a CUDA stream and a
// destroyed one is recognised.
chorusStream_t registerHostStream(std::shared_ptr<HostStream> stream);
// The host stream behind `stream`; nullptr for NULL and CUDA streams. Throws chorusInvalidArgument (naming
// `call`) for a destroyed host stream.
std::shared_ptr<HostStream> hostStreamOf(chorusStream_t stream, const char* call);
// Forgets a host stream's handle; returns its stream (nullptr when it was not one), to be destroyed by the caller.
std::shared_ptr<HostStream> unregisterHostStream(chorusStream_t stream);

}  // namespace chorus::api

// What a chorusEvent_t points at: the host stream it was recorded on and how many of its calls it waits for.
struct chorusEvent {
  std::shared_ptr<chorus::api::HostStream> stream;  // null: never recorded, or recorded on the NULL stream
  uint64_t target = 0;
};
