// DeviceApi on host memory and threads (CHORUS_DEVICE_EMULATION=1): one device (0) whose memory is memfd-backed
// host memory, whose streams are worker threads running in-order queues, and whose IPC maps another process's
// memfd. Lets the device paths of Chorus (stream ordering, staging, IPC) run and be tested without a GPU; not part
// of libchorus.so (emulation/CMakeLists.txt).
#pragma once

#include <sys/types.h>

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "device/device_api.h"
#include "emulation/device/emulated_device_memory.h"

namespace chorus {

class EmulatedStream;
class EmulatedQueue;
class EmulatedEventState;

class EmulatedDeviceApi final : public DeviceApi {
 public:
  EmulatedDeviceApi();
  // Stops every stream it still owns (after their queued work has run) and unmaps its memory.
  ~EmulatedDeviceApi() override;

  const char* name() const override { return "emulated"; }
  bool available() override { return true; }
  MemoryLocation locate(const void* p, int* device) override;
  int currentDevice() override { return 0; }
  void setDevice(int device) override;

  void* deviceAlloc(size_t bytes) override { return memory_.allocate(bytes); }
  void deviceFree(void* p) override { memory_.release(p); }
  void* pinnedAlloc(size_t bytes) override;
  void pinnedFree(void* p) override;

  DeviceStream createStream() override;
  void destroyStream(DeviceStream s) override;
  void copyAsync(void* dst, const void* src, size_t bytes, DeviceStream s) override;
  void synchronize(DeviceStream s) override;

  DeviceEvent createEvent() override;
  void destroyEvent(DeviceEvent e) override;
  void recordEvent(DeviceEvent e, DeviceStream s) override;
  bool eventDone(DeviceEvent e) override;
  void streamWaitEvent(DeviceStream s, DeviceEvent e) override;
  void streamWaitFlag(DeviceStream s, const uint32_t* flag, uint32_t value) override;
  void flagRaised(const uint32_t* flag) override { wakeFlagWaiters(flag); }
  void streamWriteFlag(DeviceStream s, uint32_t* flag, uint32_t value) override;
  void* allocationBase(const void* p) override { return memory_.regionBase(p); }

  void ipcExport(void* p, DeviceIpcHandle* handle) override { memory_.exportHandle(p, handle); }
  void* ipcOpen(const DeviceIpcHandle& handle) override { return memory_.open(handle); }
  void ipcClose(void* p) override { memory_.close(p); }
  bool exportDmabuf(const void* p, size_t bytes, int* fd, uint64_t* offset) override {
    return memory_.exportFd(p, bytes, fd, offset);
  }
  uint64_t allocationId(const void* p) override { return memory_.regionId(p); }

  // CUDA_DEVICE_MAX_CONNECTIONS shares the emulated queues as it shares a GPU's (EmulatedQueue); never MPS.
  std::string streamHoldHazard(int device) override;

  Reducer& reducer(DeviceStream s) override;

  // Wakes the stream workers waiting on `flag` (streamWaitFlag) to look at it again: the host's store alone is
  // only seen at their next poll, as a GPU would only see it at its next read.
  static void wakeFlagWaiters(const uint32_t* flag);

 private:
  struct StreamEntry;
  struct EventEntry;
  // The stream behind s (the legacy default stream for nullptr, made on first use in each process); throws
  // chorusUnhandledCudaError for handles this API did not create or that a fork's parent created.
  StreamEntry& stream(DeviceStream s, const char* what);
  std::shared_ptr<EmulatedEventState> event(DeviceEvent e, const char* what);
  // The queue a new stream runs on: null (one of its own) unless CUDA_DEVICE_MAX_CONNECTIONS is set, else the
  // next of that many shared queues, round robin (made afresh in a fork's child). Under mutex_.
  std::shared_ptr<EmulatedQueue> nextQueue();

  EmulatedDeviceMemory memory_;
  std::mutex mutex_;
  std::unordered_map<DeviceStream, std::unique_ptr<StreamEntry>> streams_;
  std::unordered_map<DeviceEvent, std::shared_ptr<EmulatedEventState>> events_;
  std::unique_ptr<StreamEntry> defaultStream_;
  pid_t defaultStreamPid_ = 0;
  std::vector<std::shared_ptr<EmulatedQueue>> sharedQueues_;
  pid_t sharedQueuesPid_ = 0;
  size_t nextSharedQueue_ = 0;
};

}  // namespace chorus
