// A communicator's device calls: enqueued behind the caller's stream (or, where holding it is unsafe, waited for by
// the caller), run on the device call queue's progress thread by the call runner, over device resources made at
// the first device call and freed at destroy.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>

#include "algorithms/hierarchical/hierarchy.h"
#include "core/collective.h"
#include "core/comm_config.h"
#include "device/device_api.h"
#include "device/device_call_queue.h"
#include "src/comm/call_failures.h"
#include "src/comm/call_order.h"
#include "src/comm/call_runner.h"
#include "src/comm/comm_io.h"
#include "src/comm/device_resources.h"
#include "src/comm/peer_connections.h"
#include "src/comm/staging_memory.h"

namespace chorus {

class DeviceSide {
 public:
  // The host side that device calls build on: the communicator's, set up before its first device call.
  struct HostSide {
    const CommConfig& config;
    PeerConnections& peers;                         // the connections the device ones layer over
    const std::shared_ptr<StagingMemory>& staging;  // its slot count
    const WaitPolicy& waitPolicy;
    const Hierarchy& hierarchy;
    CallFailures& failures;
    CallRunner& runner;  // runs each device call, as it runs host calls
    const std::shared_ptr<CallOrder>& order;  // its call lock, held while a device call runs
  };
  explicit DeviceSide(HostSide host) : host_(host) {}

  // The device API (CHORUS_DEVICE_EMULATION), chosen once, like every knob: a communicator never switches between
  // the emulation and CUDA.
  void useApi(DeviceApi& api) { api_ = &api; }
  DeviceApi& api() const { return *api_; }
  // Enqueues a batch on device buffers of GPU `device` behind the work on `stream` (CommEngine::enqueueDeviceBatch).
  void enqueue(std::span<const CallArgs> ops, DeviceStream stream, int device);
  // Waits for the device calls enqueued so far: a host call goes after them, as on every rank.
  void drain() {
    if (queue_) queue_->drain();
  }
  // Whether a device call was ever enqueued here: until then a host call has nothing to drain. (A thread that
  // enqueued one sees it; another thread's enqueue at the same moment is not ordered before its host call.)
  bool everEnqueued() const { return everEnqueued_.load(std::memory_order_relaxed); }
  // Stops the progress thread after its queue, then closes and frees the device resources.
  void shutDown();

 private:
  // Whether device calls on `device` block their caller (config deviceCalls; auto: where holding the caller's
  // stream is unsafe, DeviceApi::streamHoldHazard).
  bool callsBlock(int device);
  // The progress thread's side of a device call (DeviceCallQueue::Runner).
  void runCall(std::span<const CallArgs> ops, int device, const std::function<void()>& waitReady);
  // Made (collectively, over the host connections) at the first device call.
  DeviceResources& resources(int device);

  HostSide host_;
  DeviceApi* api_ = nullptr;
  std::mutex enqueueMutex_;  // device calls from several threads enqueue one at a time
  int device_ = -1;          // the GPU of the first device call; later ones must use the same
  std::unique_ptr<DeviceResources> resources_;
  std::unique_ptr<DeviceCallQueue> queue_;  // made at the first device call; its thread uses the above
  std::atomic<bool> everEnqueued_{false};
};

}  // namespace chorus
