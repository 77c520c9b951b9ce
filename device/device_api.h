// Everything Chorus asks of a GPU runtime, behind one interface: the CUDA runtime in production, and an emulation
// on host memory and threads (CHORUS_DEVICE_EMULATION=1) so that the device paths (stream ordering, staging,
// CUDA IPC) run and are tested on machines without a GPU. Only the CUDA implementation includes CUDA headers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "reduce/reducer.h"
#include "device/memory_location.h"

namespace chorus {

using DeviceStream = void*;  // a cudaStream_t; nullptr is the legacy default stream
using DeviceEvent = void*;   // a cudaEvent_t

// What a peer process needs to map another's device allocation (cudaIpcMemHandle_t is 64 bytes).
struct DeviceIpcHandle {
  unsigned char bytes[64];
};

class DeviceApi {
 public:
  virtual ~DeviceApi() = default;
  // "cuda" or "emulated", for messages.
  virtual const char* name() const = 0;
  // True when device buffers can be used at all (a CUDA build, a driver and a device; always for the emulation).
  virtual bool available() = 0;
  // Where p lives (kHost when unavailable); *device gets the owning GPU's ordinal for device memory.
  virtual MemoryLocation locate(const void* p, int* device) = 0;
  // The calling thread's current device, and making one current.
  virtual int currentDevice() = 0;
  virtual void setDevice(int device) = 0;

  // Device memory on the current device (exportable with ipcExport), and its release.
  virtual void* deviceAlloc(size_t bytes) = 0;
  virtual void deviceFree(void* p) = 0;
  // Page-locked host memory the device can read and write directly (mapped, portable), and its release.
  virtual void* pinnedAlloc(size_t bytes) = 0;
  virtual void pinnedFree(void* p) = 0;

  // A stream that does not synchronize with the legacy default stream, and its release.
  virtual DeviceStream createStream() = 0;
  virtual void destroyStream(DeviceStream s) = 0;
  // Enqueues a copy of any direction (host, pinned or device memory on either side) on s.
  virtual void copyAsync(void* dst, const void* src, size_t bytes, DeviceStream s) = 0;
  // Blocks until everything enqueued on s has run; throws chorusUnhandledCudaError if any of it failed.
  virtual void synchronize(DeviceStream s) = 0;

  // Events without timing, recorded on a stream and polled from the host.
  virtual DeviceEvent createEvent() = 0;
  virtual void destroyEvent(DeviceEvent e) = 0;
  virtual void recordEvent(DeviceEvent e, DeviceStream s) = 0;
  // True once the work before the last record has run; false while it has not; throws if it failed.
  virtual bool eventDone(DeviceEvent e) = 0;
  // Later work on s waits for the work before e's last record (device-side; the host does not block).
  virtual void streamWaitEvent(DeviceStream s, DeviceEvent e) = 0;
  // Later work on s waits until *flag >= value (device-side; the host does not block). flag is in pinnedAlloc
  // memory, which the host raises with a release store, or device memory, which a stream raises
  // (streamWriteFlag).
  virtual void streamWaitFlag(DeviceStream s, const uint32_t* flag, uint32_t value) = 0;
  // Told by raiseStreamFlag after the host raised `flag`: an API whose streams sleep on flags wakes them here (the
  // emulation); a GPU sees the store at its next read and needs nothing.
  virtual void flagRaised(const uint32_t* flag) {}
  // Enqueues on s a store of `value` into *flag once the work before it on s has run and its writes are visible:
  // how one stream raises a flag that another waits on (device windows' signals). flag is device memory (this
  // process's or a peer's, mapped by ipcOpen) or pinned memory. Throws chorusInvalidUsage where unsupported.
  virtual void streamWriteFlag(DeviceStream s, uint32_t* flag, uint32_t value);
  // The start of the allocation holding device pointer p (what ipcExport takes), or nullptr when unknown.
  virtual void* allocationBase(const void* p) { return nullptr; }

  // Exports a deviceAlloc'd region to other processes of this machine; ipcOpen maps one exported by another
  // process (a device pointer valid in this process until ipcClose).
  virtual void ipcExport(void* p, DeviceIpcHandle* handle) = 0;
  virtual void* ipcOpen(const DeviceIpcHandle& handle) = 0;
  virtual void ipcClose(void* p) = 0;

  // A dma-buf descriptor for the device memory [p, p+bytes) (page-aligned, inside one allocation), for an RDMA
  // adapter to register (ibv_reg_dmabuf_mr): *offset is p's place in it; the caller closes *fd. False where the
  // system cannot (no driver support, not device memory); callers then stage through host memory.
  virtual bool exportDmabuf(const void* p, size_t bytes, int* fd, uint64_t* offset) { return false; }
  // An identity of the allocation holding p, different for every allocation even at a reused address (CUDA's
  // buffer id); 0 when unknown. Caches of registrations check it to notice a freed and reallocated buffer.
  virtual uint64_t allocationId(const void* p) { return 0; }

  // Why a stream held until a device call ends could hold that call's own device work behind it on `device`
  // ("" when it cannot; see stream_hold_hazard.h): device calls then block their caller instead.
  virtual std::string streamHoldHazard(int device) { return ""; }

  // The reducer for memory this API allocates, launching on s; reduce() returns once the result is in place.
  virtual Reducer& reducer(DeviceStream s) = 0;
};

// The process's device API: the emulation when CHORUS_DEVICE_EMULATION=1, otherwise CUDA (which reports
// available() == false in builds without CUDA or on machines without a driver or a device).
DeviceApi& deviceApi();

}  // namespace chorus
