#include "src/api/host_stream.h"

#include <sched.h>

#include <unordered_map>

#include "core/error.h"
#include "src/comm/comm_engine.h"

namespace chorus::api {

HostStream::HostStream() : thread_([this] { threadMain(); }) {}

HostStream::~HostStream() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    stopping_ = true;
    workArrived_.notify_all();
  }
  thread_.join();
}

StreamStatus HostStream::enqueue(CommEngine& engine, std::span<const CallArgs> ops) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (failedAt_ != UINT64_MAX) return failure_;
  // Issued now, under the stream's lock: the stream's order and the communicator's agree.
  queue_.push_back(Queued{&engine, engine.issueHostCall(), std::vector<CallArgs>(ops.begin(), ops.end()), {}});
  ++enqueued_;
  changed();
  wakeWorkerForNewCall();
  return {};
}

StreamStatus HostStream::enqueueWindow(CommEngine& engine, std::span<const WindowOp> ops) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (failedAt_ != UINT64_MAX) return failure_;
  queue_.push_back(Queued{&engine, engine.issueHostCall(), {}, std::vector<WindowOp>(ops.begin(), ops.end())});
  ++enqueued_;
  changed();
  wakeWorkerForNewCall();
  return {};
}

void HostStream::wakeWorkerForNewCall() {
  // Only the stream's thread waits for work; a caller waiting on the stream takes queued calls itself. While callers
  // run the calls, a new one is theirs too, unless one queued before it is still waiting for anybody; the stream's
  // thread looks at the queue now and then meanwhile, and is woken if it sleeps without a timeout.
  if (busy_ || !workerSleeping_) return;
  if (!callersRun_ || queue_.size() > 1 || !workerLooksBack_) workArrived_.notify_one();
}

uint64_t HostStream::enqueued() {
  std::lock_guard<std::mutex> lock(mutex_);
  return enqueued_;
}

void HostStream::runNext(std::unique_lock<std::mutex>& lock, bool byCaller) {
  Queued call = std::move(queue_.front());
  queue_.pop_front();
  busy_ = true;
  callersRun_ = byCaller;
  const bool skip = failedAt_ != UINT64_MAX;
  const uint64_t index = finished_;
  lock.unlock();
  StreamStatus status;
  try {
    if (skip) {
      call.engine->skipIssued(call.number, /*passTurn=*/false);
    } else if (!call.windowOps.empty()) {
      call.engine->runWindowIssued(call.number, call.windowOps, /*passTurn=*/false);
    } else {
      call.engine->runIssued(call.number, call.ops, /*passTurn=*/false);
    }
  } catch (const Error& e) {
    status = {e.code(), e.what()};
  } catch (const std::exception& e) {
    status = {chorusInternalError, std::string("a call on a host stream: internal error: ") + e.what()};
  } catch (...) {
    status = {chorusInternalError, "a call on a host stream: internal error: unknown exception"};
  }
  lock.lock();
  busy_ = false;
  ++finished_;
  if (status.code != chorusSuccess && failedAt_ == UINT64_MAX) {
    failedAt_ = index;
    failure_ = std::move(status);
  }
  changed();
  // Only now may the communicator's next call run: whoever waits for a later call sees this one done here too.
  call.engine->passIssued(call.number);
  if (sleepingWaiters_ > 0) callFinished_.notify_all();
  // Whoever ran this call, the stream's thread takes the next one unless a waiting caller does.
  if (!queue_.empty() && waiters_ == 0 && workerSleeping_) workArrived_.notify_one();
}

bool HostStream::spinUntilChanged(std::unique_lock<std::mutex>& lock) {
  const uint64_t seen = version_.load(std::memory_order_acquire);
  lock.unlock();
  for (int i = 0; i < kSpinRounds && version_.load(std::memory_order_acquire) == seen; ++i) sched_yield();
  lock.lock();
  return version_.load(std::memory_order_acquire) != seen;
}

void HostStream::threadMain() {
  std::unique_lock<std::mutex> lock(mutex_);
  // While a caller waits on the stream it runs the queued calls itself: one thread hands calls over at most once.
  auto mine = [this] { return !queue_.empty() && !busy_ && waiters_ == 0; };
  auto done = [this] { return stopping_ && queue_.empty() && !busy_; };
  bool waitedForCaller = false;
  int idleChecks = 0;  // periods slept through without a call while callers run them
  for (;;) {
    if (mine()) {
      // Gives the caller that queued it a moment to start waiting and run it itself (no handover at all), as a
      // caller that synchronizes right away does; a call left to the background starts microseconds later.
      if (!waitedForCaller) {
        waitedForCaller = true;
        lock.unlock();
        const auto until = std::chrono::steady_clock::now() + kPickupWindow;
        while (waiters_.load(std::memory_order_relaxed) == 0 && std::chrono::steady_clock::now() < until) sched_yield();
        lock.lock();
        continue;
      }
      waitedForCaller = false;
      runNext(lock, /*byCaller=*/false);
      continue;
    }
    waitedForCaller = false;
    if (done()) return;
    if (callersRun_) {
      // Callers run the calls: no spinning, no wakeup per call; now and then a look for a call left to nobody.
      const uint64_t queuedBefore = enqueued_;
      workerSleeping_ = workerLooksBack_ = true;
      workArrived_.wait_for(lock, kCallersRunCheck, [&] { return mine() || done(); });
      workerSleeping_ = workerLooksBack_ = false;
      idleChecks = enqueued_ != queuedBefore ? 0 : idleChecks + 1;
      if (idleChecks >= kIdleChecks) callersRun_ = false;
      continue;
    }
    if (spinUntilChanged(lock)) continue;
    workerSleeping_ = true;
    workArrived_.wait(lock, [&] { return mine() || done(); });
    workerSleeping_ = false;
  }
}

StreamStatus HostStream::statusUpTo(uint64_t target) const {
  return failedAt_ < target ? failure_ : StreamStatus{};
}

StreamStatus HostStream::waitFor(uint64_t target) {
  std::unique_lock<std::mutex> lock(mutex_);
  ++waiters_;
  while (finished_ < target) {
    if (!busy_ && !queue_.empty()) {
      runNext(lock, /*byCaller=*/true);
      continue;
    }
    if (spinUntilChanged(lock)) continue;
    ++sleepingWaiters_;
    const uint64_t seen = version_.load();
    callFinished_.wait(lock, [&] { return version_.load() != seen; });
    --sleepingWaiters_;
  }
  --waiters_;
  // A caller that stops waiting leaves the rest of the queue to the stream's thread.
  if (!queue_.empty() && !busy_ && waiters_ == 0) workArrived_.notify_one();
  return statusUpTo(target);
}

StreamStatus HostStream::query(uint64_t target) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_ < target) return {chorusInProgress, ""};
  return statusUpTo(target);
}

namespace {

constexpr uintptr_t kHandleTag = 0xC5;  // the low byte of every host stream handle: never an aligned pointer

std::mutex registryMutex;
std::unordered_map<uint64_t, std::shared_ptr<HostStream>> registry;
uint64_t nextSerial = 1;

bool isHostStreamHandle(chorusStream_t stream) {
  return (reinterpret_cast<uintptr_t>(stream) & 0xff) == kHandleTag;
}

uint64_t serialOf(chorusStream_t stream) { return reinterpret_cast<uintptr_t>(stream) >> 8; }

}  // namespace

chorusStream_t registerHostStream(std::shared_ptr<HostStream> stream) {
  std::lock_guard<std::mutex> lock(registryMutex);
  const uint64_t serial = nextSerial++;
  registry.emplace(serial, std::move(stream));
  return reinterpret_cast<chorusStream_t>(static_cast<uintptr_t>(serial << 8) | kHandleTag);
}

std::shared_ptr<HostStream> hostStreamOf(chorusStream_t stream, const char* call) {
  if (stream == nullptr || !isHostStreamHandle(stream)) return nullptr;
  std::lock_guard<std::mutex> lock(registryMutex);
  auto it = registry.find(serialOf(stream));
  if (it == registry.end()) {
    throwInvalidArgument(std::string(call) + ": the host stream was destroyed (chorusHostStreamDestroy)");
  }
  return it->second;
}

std::shared_ptr<HostStream> unregisterHostStream(chorusStream_t stream) {
  if (stream == nullptr || !isHostStreamHandle(stream)) return nullptr;
  std::lock_guard<std::mutex> lock(registryMutex);
  auto it = registry.find(serialOf(stream));
  if (it == registry.end()) return nullptr;
  std::shared_ptr<HostStream> s = std::move(it->second);
  registry.erase(it);
  return s;
}

}  // namespace chorus::api
