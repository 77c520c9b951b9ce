#include "src/comm/device_side.h"

#include <string>

#include "core/error.h"
#include "core/logging.h"
#include "transports/device/device_connections.h"

namespace chorus {

DeviceResources::~DeviceResources() {
  io.reset();
  conns.clear();
  staging.reset();
  for (char* p : retiredStaging) {
    try {
      api->deviceFree(p);
    } catch (const std::exception& e) {
      CHORUS_WARN(-1, "freeing device staging memory: " << e.what());
    }
  }
  if (api != nullptr && stream != nullptr) {
    try {
      api->destroyStream(stream);
    } catch (const std::exception& e) {
      CHORUS_WARN(-1, "destroying a communicator's device stream: " << e.what());
    }
  }
}

void DeviceSide::enqueue(std::span<const CallArgs> ops, DeviceStream stream, int device) {
  std::lock_guard<std::mutex> lock(enqueueMutex_);
  const CommConfig& config = host_.config;
  CommLogScope logScope(config.commName);
  const int rank = host_.peers.rank();
  const std::string who = withCommName(config.commName, errorContext(rank));
  try {
    host_.failures.refuseIfUnusable([&] { return who; });
    // The staging memory and the device connections belong to one GPU, as an NCCL communicator does.
    if (device_ >= 0 && device != device_) {
      throwInvalidArgument(who + ": device buffers on GPU " + std::to_string(device) +
                           ", but this communicator's device calls use GPU " + std::to_string(device_) +
                           " (the GPU of its first device call)");
    }
    if (!queue_) {
      queue_ = std::make_unique<DeviceCallQueue>(
          *api_, rank,
          [this](std::span<const CallArgs> o, int d, const std::function<void()>& waitReady) {
            runCall(o, d, waitReady);
          },
          host_.failures.state().abortFlag(), config.timeoutSeconds, callsBlock(device));
    }
    device_ = device;
    everEnqueued_.store(true, std::memory_order_relaxed);
    queue_->enqueue(ops, stream, device);
  } catch (const Error& e) {
    // The C API records argument errors itself; anything else is this communicator's to record.
    if (e.code() != chorusInvalidArgument) host_.failures.state().recordMessage(e.what());
    throw;
  }
}

bool DeviceSide::callsBlock(int device) {
  const auto mode = static_cast<DeviceCalls>(host_.config.deviceCalls);
  if (mode != DeviceCalls::kAuto) return mode == DeviceCalls::kBlocking;
  const std::string hazard = api_->streamHoldHazard(device);
  if (hazard.empty()) return false;
  // Once per process: every communicator of it decides alike.
  static std::once_flag warned;
  std::call_once(warned, [&] {
    CHORUS_WARN(host_.peers.rank(),
                withCommName(host_.config.commName,
                             "device calls block their caller until done, instead of holding the caller's stream: " +
                                 hazard + " (CHORUS_DEVICE_CALLS=stream holds the stream anyway)"));
  });
  return true;
}

void DeviceSide::runCall(std::span<const CallArgs> ops, int device, const std::function<void()>& waitReady) {
  CallLocked locked(*host_.order);
  host_.runner.execute(
      ops,
      [&]() -> CommIO& {
        waitReady();
        return *resources(device).io;
      },
      true);
}

DeviceResources& DeviceSide::resources(int device) {
  if (resources_) return *resources_;
  const int rank = host_.peers.rank();
  const double timeoutSeconds = host_.config.timeoutSeconds;
  const std::string context =
      errorContext(rank, "setting up device calls on GPU " + std::to_string(device) + " (" + api_->name() + ")");
  CHORUS_INFO(rank, context);
  auto r = std::make_unique<DeviceResources>();
  DeviceApi& api = *api_;
  r->api = &api;
  r->device = device;
  // The progress thread is ours: it stays on this GPU for good.
  api.setDevice(device);
  r->stream = api.createStream();
  const size_t sliceBytes = CallPlanner::largestDeviceSlice(host_.config);
  DeviceResources* resources = r.get();
  StagingAllocator onDevice{[&api](size_t bytes) { return static_cast<char*>(api.deviceAlloc(bytes)); },
                            [resources](char* p, size_t) { resources->retiredStaging.push_back(p); }};
  r->staging = std::make_unique<StagingMemory>(host_.staging->slots(), sliceBytes, StagingMemory::kFirstWorkspaceBytes,
                                               std::move(onDevice));
  // Collective: every rank reaches its first device call at the same point of its call sequence.
  r->conns = makeDeviceConnections(rank, host_.peers.conns(), host_.peers.sameMachine(), api,
                                   Deadline::after(timeoutSeconds), sliceBytes);
  r->io = std::make_unique<CommIO>(rank, host_.peers.size(), r->conns, *r->staging, api.reducer(r->stream),
                                   host_.waitPolicy, host_.failures.state().abortFlag(),
                                   host_.failures.wakeDescriptor());
  r->io->setHierarchy(&host_.hierarchy);
  r->io->setDeviceCopies(&api, r->stream);
  resources_ = std::move(r);
  host_.failures.watchDeviceConnections(&resources_->conns);
  return *resources_;
}

void DeviceSide::shutDown() {
  queue_.reset();  // runs or fails what is queued, then joins the progress thread
  if (!resources_) return;
  host_.failures.closeConnections(resources_->conns);
  host_.failures.watchDeviceConnections(nullptr);
  resources_.reset();
}

}  // namespace chorus
