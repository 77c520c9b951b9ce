// The emulated device's streams and events (emulated_stream.h): in-order queues run by worker threads, as a GPU
// runs a stream's work, for machines without a GPU.
#include "emulation/device/emulated_stream.h"

#include <unistd.h>

#include <exception>
#include <utility>

#include "core/error.h"

namespace chorus {

uint64_t EmulatedEventState::beginRecord() {
  std::lock_guard<std::mutex> lock(mutex_);
  return ++recorded_;
}

void EmulatedEventState::markDone(uint64_t number, const std::string& error) {
  // Notified under the lock: a waiter that sees the record done may destroy the event at once, and the broadcast
  // must be over by then (TSan saw the condition variable destroyed during it).
  std::lock_guard<std::mutex> lock(mutex_);
  // Records made on different streams may finish out of order; only the latest one decides done().
  if (number > completed_) completed_ = number;
  if (number == recorded_) error_ = error;
  changed_.notify_all();
}

uint64_t EmulatedEventState::latestRecord() {
  std::lock_guard<std::mutex> lock(mutex_);
  return recorded_;
}

bool EmulatedEventState::done() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (completed_ < recorded_) return false;
  if (!error_.empty()) throw Error(chorusUnhandledCudaError, "emulated event: the recording stream failed: " + error_);
  return true;
}

void EmulatedEventState::waitFor(uint64_t number) {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return completed_ >= number; });
}

EmulatedQueue::EmulatedQueue() : ownerPid_(getpid()) {
  worker_ = std::thread([this] { runWorker(); });
  // Returns only once the worker runs its loop: a thread still starting holds runtime locks (a sanitizer's thread
  // registry, the allocator's), and a fork taken then would leave the child waiting on them forever.
  std::unique_lock<std::mutex> lock(mutex_);
  started_.wait(lock, [&] { return running_; });
}

EmulatedQueue::~EmulatedQueue() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  workArrived_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void EmulatedQueue::enqueue(std::function<void()> work) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(work));
  }
  workArrived_.notify_one();
}

void EmulatedQueue::runWorker() {
  std::unique_lock<std::mutex> lock(mutex_);
  running_ = true;
  started_.notify_all();
  for (;;) {
    // Stopping still drains the queue: destroying a queue never drops work that was enqueued on it.
    workArrived_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;
    std::function<void()> work = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    work();
    lock.lock();
  }
}

EmulatedStream::EmulatedStream(std::string name, std::shared_ptr<EmulatedQueue> queue)
    : name_(std::move(name)), queue_(queue ? std::move(queue) : std::make_shared<EmulatedQueue>()) {}

EmulatedStream::~EmulatedStream() {
  std::unique_lock<std::mutex> lock(mutex_);
  workDone_.wait(lock, [&] { return completed_ >= enqueued_; });
}

void EmulatedStream::enqueue(std::function<void()> work) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++enqueued_;
  }
  queue_->enqueue([this, work = std::move(work)] {
    std::string failure;
    try {
      work();
    } catch (const std::exception& e) {
      failure = e.what();
    } catch (...) {
      failure = "unknown exception";
    }
    // Notified under the lock: once it is released, the destructor may run, and nothing here touches the stream.
    std::lock_guard<std::mutex> lock(mutex_);
    if (!failure.empty() && error_.empty()) error_ = failure;
    ++completed_;
    workDone_.notify_all();
  });
}

void EmulatedStream::synchronize() {
  std::unique_lock<std::mutex> lock(mutex_);
  const uint64_t target = enqueued_;
  workDone_.wait(lock, [&] { return completed_ >= target; });
  if (!error_.empty()) {
    throw Error(chorusUnhandledCudaError, "emulated device: synchronizing " + name_ + " failed: " + error_);
  }
}

std::string EmulatedStream::error() {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

}  // namespace chorus
