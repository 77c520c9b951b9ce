#include "src/api/host_stream.h"

#include <unordered_map>

#include "core/error.h"
#include "src/comm/comm_engine.h"

namespace chorus::api {

HostStream::HostStream() : thread_([this] { threadMain(); }) {}

HostStream::~HostStream() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    stopping_ = true;
    changed_.notify_all();
  }
  thread_.join();
}

StreamStatus HostStream::enqueue(CommEngine& engine, std::span<const Op> ops) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (failedAt_ != UINT64_MAX) return failure_;
  // Issued now, under the stream's lock: the stream's order and the communicator's agree.
  queue_.push_back(Queued{&engine, engine.issueHostCall(), std::vector<Op>(ops.begin(), ops.end())});
  ++enqueued_;
  changed_.notify_all();
  return {};
}

uint64_t HostStream::enqueued() {
  std::lock_guard<std::mutex> lock(mutex_);
  return enqueued_;
}

void HostStream::runNext(std::unique_lock<std::mutex>& lock) {
  Queued call = std::move(queue_.front());
  queue_.pop_front();
  busy_ = true;
  const bool skip = failedAt_ != UINT64_MAX;
  const uint64_t index = finished_;
  lock.unlock();
  StreamStatus status;
  try {
    if (skip) {
      call.engine->skipIssued(call.number);
    } else {
      call.engine->runIssued(call.number, call.ops);
    }
  } catch (const Error& e) {
    status = {e.code(), e.what()};
  } catch (const std::exception& e) {
    status = {chorusInternalError, std::string("a call on a host stream: internal error: ") + e.what()};
  }
  lock.lock();
  busy_ = false;
  ++finished_;
  if (status.code != chorusSuccess && failedAt_ == UINT64_MAX) {
    failedAt_ = index;
    failure_ = std::move(status);
  }
  changed_.notify_all();
}

void HostStream::threadMain() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return (!queue_.empty() && !busy_) || (stopping_ && queue_.empty() && !busy_); });
    if (queue_.empty()) return;  // stopping, and nothing left
    runNext(lock);
  }
}

StreamStatus HostStream::statusUpTo(uint64_t target) const {
  return failedAt_ < target ? failure_ : StreamStatus{};
}

StreamStatus HostStream::waitFor(uint64_t target) {
  std::unique_lock<std::mutex> lock(mutex_);
  while (finished_ < target) {
    if (!busy_ && !queue_.empty()) {
      runNext(lock);
    } else {
      changed_.wait(lock);
    }
  }
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
