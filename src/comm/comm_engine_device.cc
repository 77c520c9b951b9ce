// The communicator's device calls: enqueueing on the caller's thread (or, where holding its stream is unsafe,
// waiting there), running on the progress thread, and the resources those calls use (made at the first one, freed
// at destroy).
#include <mutex>
#include <string>

#include "src/comm/comm_engine.h"
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

void CommEngine::enqueueDeviceBatch(std::span<const Op> ops, DeviceStream stream, int device) {
  CallerCount inside(activeCallers_);
  std::lock_guard<std::mutex> lock(enqueueMutex_);
  CommLogScope logScope(config_.commName);
  const std::string who = named(errorContext(rank_));
  try {
    if (failures_.unusable()) failures_.refuse(who);
    // The staging memory and the device connections belong to one GPU, as an NCCL communicator does.
    if (device_ >= 0 && device != device_) {
      throwInvalidArgument(who + ": device buffers on GPU " + std::to_string(device) +
                           ", but this communicator's device calls use GPU " + std::to_string(device_) +
                           " (the GPU of its first device call)");
    }
    if (!deviceQueue_) {
      deviceQueue_ = std::make_unique<DeviceCallQueue>(
          *deviceApi_, rank_,
          [this](std::span<const Op> o, int d, const std::function<void()>& waitReady) { runDeviceCall(o, d, waitReady); },
          failures_.abortFlag(), timeoutSeconds_, deviceCallsBlock(device));
    }
    device_ = device;
    deviceQueue_->enqueue(ops, stream, device);
  } catch (const Error& e) {
    // The C API records argument errors itself; anything else is this communicator's to record.
    if (e.code() != chorusInvalidArgument) failures_.recordMessage(e.what());
    throw;
  }
}

bool CommEngine::deviceCallsBlock(int device) {
  const auto mode = static_cast<DeviceCalls>(config_.deviceCalls);
  if (mode != DeviceCalls::kAuto) return mode == DeviceCalls::kBlocking;
  const std::string hazard = deviceApi_->streamHoldHazard(device);
  if (hazard.empty()) return false;
  // Once per process: every communicator of it decides alike.
  static std::once_flag warned;
  std::call_once(warned, [&] {
    CHORUS_WARN(rank_, named("device calls block their caller until done, instead of holding the caller's stream: " +
                             hazard + " (CHORUS_DEVICE_CALLS=stream holds the stream anyway)"));
  });
  return true;
}

void CommEngine::runDeviceCall(std::span<const Op> ops, int device, const std::function<void()>& waitReady) {
  execute(
      ops,
      [&]() -> CommIO& {
        waitReady();
        return *deviceResources(device).io;
      },
      true);
}

DeviceResources& CommEngine::deviceResources(int device) {
  if (deviceResources_) return *deviceResources_;
  const std::string context =
      errorContext(rank_, "setting up device calls on GPU " + std::to_string(device) + " (" + deviceApi_->name() + ")");
  CHORUS_INFO(rank_, context);
  auto r = std::make_unique<DeviceResources>();
  DeviceApi& api = *deviceApi_;
  r->api = &api;
  r->device = device;
  // The progress thread is ours: it stays on this GPU for good.
  api.setDevice(device);
  r->stream = api.createStream();
  const size_t sliceBytes = CallPlanner::largestDeviceSlice(config_);
  DeviceResources* resources = r.get();
  StagingAllocator onDevice{[&api](size_t bytes) { return static_cast<char*>(api.deviceAlloc(bytes)); },
                            [resources](char* p, size_t) { resources->retiredStaging.push_back(p); }};
  r->staging = std::make_unique<StagingMemory>(staging_->slots(), sliceBytes, 64 << 10, std::move(onDevice));
  // Collective: every rank reaches its first device call at the same point of its call sequence.
  r->conns = makeDeviceConnections(rank_, conns_, sameMachine_, api, Deadline::after(timeoutSeconds_), sliceBytes);
  r->io = std::make_unique<CommIO>(rank_, size_, r->conns, *r->staging, api.reducer(r->stream), spinRounds_,
                                   yieldRounds_, failures_.abortFlag(), wakeFd_);
  r->io->setHierarchy(&hierarchy_);
  r->io->setDeviceCopies(&api, r->stream);
  deviceResources_ = std::move(r);
  return *deviceResources_;
}

void CommEngine::shutDownDevice() {
  deviceQueue_.reset();  // runs or fails what is queued, then joins the progress thread
  if (!deviceResources_) return;
  for (auto& c : deviceResources_->conns) {
    if (!c) continue;
    if (failures_.unusable()) {
      c->abandon();
    } else {
      c->closeGracefully();
    }
  }
  deviceResources_.reset();
}

}  // namespace chorus
