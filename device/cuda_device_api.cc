#include "device/cuda_device_api.h"

#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "reduce/cuda/cuda_reducer.h"
#include "core/error.h"
#include "core/logging.h"
#include "core/cuda_error.h"
#include "core/device_runtime.h"
#include "device/memory_location.h"
#include "device/stream_hold_hazard.h"

#ifdef CHORUS_HAVE_CUDA
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstring>

#include "reduce/cuda/reduce_launch.h"
#include "device/wait_flag_launch.h"
#endif

namespace chorus {
namespace {

std::string describe(const char* what, const void* a = nullptr, const void* b = nullptr) {
  std::ostringstream os;
  os << "CUDA device API " << what;
  if (a != nullptr) os << " (" << a;
  if (b != nullptr) os << ", " << b;
  if (a != nullptr) os << ")";
  return os.str();
}

#ifdef CHORUS_HAVE_CUDA

// Throws chorusUnhandledCudaError for a failed runtime call, first clearing the runtime's last error so that it
// does not resurface in an unrelated check (sticky errors stay sticky regardless).
void check(cudaError_t error, const std::string& context, const char* call) {
  if (error == cudaSuccess) return;
  cudaGetLastError();
  throwCudaError(context, call, static_cast<int>(error));
}

using StreamWaitValue32 = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
using StreamWriteValue32 = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
using MemGetAddressRange = CUresult (*)(CUdeviceptr*, size_t*, CUdeviceptr);
using GetErrorString = CUresult (*)(CUresult, const char**);

// A driver function by name, without linking the driver library (the runtime finds it in the loaded driver);
// nullptr when the driver lacks it.
void* driverFunction(const char* symbol, unsigned int version) {
  void* function = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
  const cudaError_t error = cudaGetDriverEntryPointByVersion(symbol, &function, version, cudaEnableDefault, &found);
#else
  (void)version;
  const cudaError_t error = cudaGetDriverEntryPoint(symbol, &function, cudaEnableDefault, &found);
#endif
  if (error != cudaSuccess || found != cudaDriverEntryPointSuccess) {
    cudaGetLastError();
    CHORUS_INFO(-1, "CUDA driver entry point " << symbol << " unavailable: "
                                               << (error != cudaSuccess ? cudaGetErrorString(error) : "not found"));
    return nullptr;
  }
  return function;
}

std::string driverErrorText(CUresult result) {
  static const auto getErrorString = reinterpret_cast<GetErrorString>(driverFunction("cuGetErrorString", 6000));
  const char* text = nullptr;
  if (getErrorString != nullptr && getErrorString(result, &text) == CUDA_SUCCESS && text != nullptr) return text;
  return "CUresult " + std::to_string(static_cast<int>(result));
}

class CudaDeviceApi final : public DeviceApi {
 public:
  const char* name() const override { return "cuda"; }
  bool available() override { return cudaAvailable(); }
  MemoryLocation locate(const void* p, int* device) override { return locateBuffer(p, device); }
  int currentDevice() override {
    int device = -1;
    check(cudaGetDevice(&device), describe("currentDevice"), "cudaGetDevice");
    return device;
  }
  void setDevice(int device) override {
    check(cudaSetDevice(device), describe("setDevice") + " to device " + std::to_string(device), "cudaSetDevice");
  }

  void* deviceAlloc(size_t bytes) override {
    void* p = nullptr;
    if (bytes == 0) return nullptr;
    check(cudaMalloc(&p, bytes), describe("deviceAlloc") + " of " + std::to_string(bytes) + " bytes", "cudaMalloc");
    return p;
  }
  void deviceFree(void* p) override { check(cudaFree(p), describe("deviceFree", p), "cudaFree"); }
  void* pinnedAlloc(size_t bytes) override {
    void* p = nullptr;
    if (bytes == 0) return nullptr;
    // Portable: usable from every device's context; mapped: kernels and stream memory operations can reach it.
    check(cudaHostAlloc(&p, bytes, cudaHostAllocPortable | cudaHostAllocMapped),
          describe("pinnedAlloc") + " of " + std::to_string(bytes) + " bytes", "cudaHostAlloc");
    return p;
  }
  void pinnedFree(void* p) override { check(cudaFreeHost(p), describe("pinnedFree", p), "cudaFreeHost"); }

  std::string streamHoldHazard(int device) override {
    int mps = 0;
    // cudaDevAttrMpsEnabled (133) by number: toolkits before 12.x lack the name; older drivers refuse it (no MPS).
    if (cudaDeviceGetAttribute(&mps, static_cast<cudaDeviceAttr>(133), device) != cudaSuccess) {
      cudaGetLastError();
      mps = 0;
    }
    return chorus::streamHoldHazard(mps != 0);
  }

  DeviceStream createStream() override {
    cudaStream_t s = nullptr;
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), describe("createStream"), "cudaStreamCreateWithFlags");
    return s;
  }
  void destroyStream(DeviceStream s) override {
    if (s == nullptr) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      reducers_.erase(s);
    }
    check(cudaStreamDestroy(asStream(s)), describe("destroyStream", s), "cudaStreamDestroy");
  }
  void copyAsync(void* dst, const void* src, size_t bytes, DeviceStream s) override {
    if (bytes == 0) return;
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, asStream(s)),
          describe("copyAsync", src, dst) + " of " + std::to_string(bytes) + " bytes on stream " + pointerText(s),
          "cudaMemcpyAsync");
  }
  void synchronize(DeviceStream s) override {
    check(cudaStreamSynchronize(asStream(s)), describe("synchronize") + " of stream " + pointerText(s),
          "cudaStreamSynchronize");
  }

  DeviceEvent createEvent() override {
    cudaEvent_t e = nullptr;
    check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), describe("createEvent"), "cudaEventCreateWithFlags");
    return e;
  }
  void destroyEvent(DeviceEvent e) override {
    if (e == nullptr) return;
    check(cudaEventDestroy(asEvent(e)), describe("destroyEvent", e), "cudaEventDestroy");
  }
  void recordEvent(DeviceEvent e, DeviceStream s) override {
    check(cudaEventRecord(asEvent(e), asStream(s)), describe("recordEvent", e) + " on stream " + pointerText(s),
          "cudaEventRecord");
  }
  bool eventDone(DeviceEvent e) override {
    const cudaError_t error = cudaEventQuery(asEvent(e));
    if (error == cudaErrorNotReady) {
      cudaGetLastError();  // not an error, but the runtime remembers it as the last one
      return false;
    }
    check(error, describe("eventDone", e), "cudaEventQuery");
    return true;
  }
  void streamWaitEvent(DeviceStream s, DeviceEvent e) override {
    check(cudaStreamWaitEvent(asStream(s), asEvent(e), 0),
          describe("streamWaitEvent", e) + " on stream " + pointerText(s), "cudaStreamWaitEvent");
  }
  void streamWaitFlag(DeviceStream s, const uint32_t* flag, uint32_t value) override;
  void streamWriteFlag(DeviceStream s, uint32_t* flag, uint32_t value) override;
  void* allocationBase(const void* p) override {
    static const auto range = reinterpret_cast<MemGetAddressRange>(driverFunction("cuMemGetAddressRange", 3020));
    CUdeviceptr base = 0;
    size_t bytes = 0;
    if (!range || range(&base, &bytes, reinterpret_cast<CUdeviceptr>(p)) != CUDA_SUCCESS) return nullptr;
    return reinterpret_cast<void*>(base);
  }
  // Loads every kernel Chorus launches into the current device's context, once per device; see loadReduceKernels.
  void loadKernels(const std::string& context);

  bool exportDmabuf(const void* p, size_t bytes, int* fd, uint64_t* offset) override {
    using GetHandle = CUresult (*)(void*, CUdeviceptr, size_t, CUmemRangeHandleType, unsigned long long);
    using GetAttribute = CUresult (*)(int*, CUdevice_attribute, CUdevice);
    static const auto getHandle = reinterpret_cast<GetHandle>(driverFunction("cuMemGetHandleForAddressRange", 11070));
    static const auto getAttribute = reinterpret_cast<GetAttribute>(driverFunction("cuDeviceGetAttribute", 2000));
    int device = -1;
    if (!getHandle || !getAttribute || locate(p, &device) != MemoryLocation::kDevice) return false;
    int supported = 0;
    if (getAttribute(&supported, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, device) != CUDA_SUCCESS || !supported) {
      return false;
    }
    int handle = -1;
    const CUresult r = getHandle(&handle, reinterpret_cast<CUdeviceptr>(p), bytes,
                                 CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
    if (r != CUDA_SUCCESS) {
      CHORUS_INFO(-1, "cuMemGetHandleForAddressRange(" << p << ", " << bytes << "): " << driverErrorText(r)
                                                       << ": device memory is staged through host memory");
      return false;
    }
    *fd = handle;
    *offset = 0;
    return true;
  }
  uint64_t allocationId(const void* p) override {
    using GetPointerAttribute = CUresult (*)(void*, CUpointer_attribute, CUdeviceptr);
    static const auto getPointerAttribute =
        reinterpret_cast<GetPointerAttribute>(driverFunction("cuPointerGetAttribute", 4000));
    unsigned long long id = 0;
    if (!getPointerAttribute ||
        getPointerAttribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID, reinterpret_cast<CUdeviceptr>(p)) != CUDA_SUCCESS) {
      cudaGetLastError();
      return 0;
    }
    return id;
  }
  void ipcExport(void* p, DeviceIpcHandle* handle) override {
    static_assert(sizeof(cudaIpcMemHandle_t) == sizeof(DeviceIpcHandle));
    cudaIpcMemHandle_t cudaHandle;
    check(cudaIpcGetMemHandle(&cudaHandle, p), describe("ipcExport", p), "cudaIpcGetMemHandle");
    std::memcpy(handle->bytes, &cudaHandle, sizeof(cudaHandle));
  }
  void* ipcOpen(const DeviceIpcHandle& handle) override {
    cudaIpcMemHandle_t cudaHandle;
    std::memcpy(&cudaHandle, handle.bytes, sizeof(cudaHandle));
    void* p = nullptr;
    check(cudaIpcOpenMemHandle(&p, cudaHandle, cudaIpcMemLazyEnablePeerAccess), describe("ipcOpen"),
          "cudaIpcOpenMemHandle");
    return p;
  }
  void ipcClose(void* p) override { check(cudaIpcCloseMemHandle(p), describe("ipcClose", p), "cudaIpcCloseMemHandle"); }

  Reducer& reducer(DeviceStream s) override {
    std::lock_guard<std::mutex> lock(mutex_);
    std::unique_ptr<CudaReducer>& reducer = reducers_[s];
    if (!reducer) reducer = std::make_unique<CudaReducer>(asStream(s));
    return *reducer;
  }

 private:
  static cudaStream_t asStream(DeviceStream s) { return static_cast<cudaStream_t>(s); }
  static cudaEvent_t asEvent(DeviceEvent e) { return static_cast<cudaEvent_t>(e); }
  static std::string pointerText(const void* p) {
    if (p == nullptr) return "(legacy default)";
    std::ostringstream os;
    os << p;
    return os.str();
  }

  std::mutex mutex_;
  std::unordered_map<DeviceStream, std::unique_ptr<CudaReducer>> reducers_;
  std::once_flag waitValueOnce_;
  std::vector<bool> kernelsLoaded_;  // by device, under mutex_
  StreamWaitValue32 waitValue32_ = nullptr;
  bool waitValueRefused_ = false;  // the driver said the device does not support stream memory operations
  std::once_flag writeValueOnce_;
  StreamWriteValue32 writeValue32_ = nullptr;
  bool writeValueRefused_ = false;
};

void CudaDeviceApi::loadKernels(const std::string& context) {
  int device = -1;
  check(cudaGetDevice(&device), context, "cudaGetDevice");
  std::lock_guard<std::mutex> lock(mutex_);
  if (device < 0) return;
  if (kernelsLoaded_.size() <= static_cast<size_t>(device)) kernelsLoaded_.resize(device + 1, false);
  if (kernelsLoaded_[device]) return;
  check(loadReduceKernels(), context + ": loading the reduction kernels", "cudaFuncGetAttributes");
  check(static_cast<cudaError_t>(loadWaitFlagKernel()), context + ": loading the flag-wait kernel",
        "cudaFuncGetAttributes");
  kernelsLoaded_[device] = true;
}

void CudaDeviceApi::streamWaitFlag(DeviceStream s, const uint32_t* flag, uint32_t value) {
  const std::string context =
      describe("streamWaitFlag", flag) + " for " + std::to_string(value) + " on stream " + pointerText(s);
  // Before the stream is held: a kernel loaded lazily while it waits would wait for the device, and so for this.
  loadKernels(context);
  // Device memory (a device window's signal counters) is its own device pointer; pinned memory has one of its own.
  void* devicePointer = const_cast<uint32_t*>(flag);
  if (locate(flag, nullptr) != MemoryLocation::kDevice) {
    check(cudaHostGetDevicePointer(&devicePointer, const_cast<uint32_t*>(flag), 0), context,
          "cudaHostGetDevicePointer");
  }
  // cuStreamWaitValue32 holds the stream in the front end without occupying a multiprocessor; the kernel is the
  // fallback for drivers or devices without stream memory operations.
  std::call_once(waitValueOnce_, [&] {
    waitValue32_ = reinterpret_cast<StreamWaitValue32>(driverFunction("cuStreamWaitValue32", 11070));
  });
  if (waitValue32_ != nullptr && !waitValueRefused_) {
    const CUresult result = waitValue32_(reinterpret_cast<CUstream>(s), reinterpret_cast<CUdeviceptr>(devicePointer),
                                         value, CU_STREAM_WAIT_VALUE_GEQ);
    if (result == CUDA_SUCCESS) return;
    if (result != CUDA_ERROR_NOT_SUPPORTED) {
      throw Error(chorusUnhandledCudaError, context + ": cuStreamWaitValue32 failed: " + driverErrorText(result));
    }
    CHORUS_INFO(-1, "cuStreamWaitValue32 is not supported here; stream waits on host flags use a polling kernel");
    waitValueRefused_ = true;
  }
  check(static_cast<cudaError_t>(launchWaitFlagKernel(static_cast<const uint32_t*>(devicePointer), value, asStream(s))),
        context, "launchWaitFlagKernel");
}

void CudaDeviceApi::streamWriteFlag(DeviceStream s, uint32_t* flag, uint32_t value) {
  const std::string context =
      describe("streamWriteFlag", flag) + " of " + std::to_string(value) + " on stream " + pointerText(s);
  loadKernels(context);
  void* devicePointer = flag;
  if (locate(flag, nullptr) != MemoryLocation::kDevice) {
    check(cudaHostGetDevicePointer(&devicePointer, flag, 0), context, "cudaHostGetDevicePointer");
  }
  // Without CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER the write is fenced behind the stream's earlier writes: a peer
  // that sees the value sees the bytes copied before it.
  std::call_once(writeValueOnce_, [&] {
    writeValue32_ = reinterpret_cast<StreamWriteValue32>(driverFunction("cuStreamWriteValue32", 11070));
  });
  if (writeValue32_ != nullptr && !writeValueRefused_) {
    const CUresult result = writeValue32_(reinterpret_cast<CUstream>(s), reinterpret_cast<CUdeviceptr>(devicePointer),
                                          value, CU_STREAM_WRITE_VALUE_DEFAULT);
    if (result == CUDA_SUCCESS) return;
    if (result != CUDA_ERROR_NOT_SUPPORTED) {
      throw Error(chorusUnhandledCudaError, context + ": cuStreamWriteValue32 failed: " + driverErrorText(result));
    }
    CHORUS_INFO(-1, "cuStreamWriteValue32 is not supported here; streams raise flags with a one-thread kernel");
    writeValueRefused_ = true;
  }
  check(static_cast<cudaError_t>(launchWriteFlagKernel(static_cast<uint32_t*>(devicePointer), value, asStream(s))),
        context, "launchWriteFlagKernel");
}

#else  // !CHORUS_HAVE_CUDA

[[noreturn]] void throwNoCuda(const char* what) {
  throw Error(chorusUnhandledCudaError, describe(what) + ": this build of Chorus has no CUDA support");
}

class CudaDeviceApi final : public DeviceApi {
 public:
  const char* name() const override { return "cuda"; }
  bool available() override { return false; }
  MemoryLocation locate(const void*, int*) override { return MemoryLocation::kHost; }
  int currentDevice() override { throwNoCuda("currentDevice"); }
  void setDevice(int) override { throwNoCuda("setDevice"); }
  void* deviceAlloc(size_t) override { throwNoCuda("deviceAlloc"); }
  void deviceFree(void*) override { throwNoCuda("deviceFree"); }
  void* pinnedAlloc(size_t) override { throwNoCuda("pinnedAlloc"); }
  void pinnedFree(void*) override { throwNoCuda("pinnedFree"); }
  DeviceStream createStream() override { throwNoCuda("createStream"); }
  void destroyStream(DeviceStream) override { throwNoCuda("destroyStream"); }
  void copyAsync(void*, const void*, size_t, DeviceStream) override { throwNoCuda("copyAsync"); }
  void synchronize(DeviceStream) override { throwNoCuda("synchronize"); }
  DeviceEvent createEvent() override { throwNoCuda("createEvent"); }
  void destroyEvent(DeviceEvent) override { throwNoCuda("destroyEvent"); }
  void recordEvent(DeviceEvent, DeviceStream) override { throwNoCuda("recordEvent"); }
  bool eventDone(DeviceEvent) override { throwNoCuda("eventDone"); }
  void streamWaitEvent(DeviceStream, DeviceEvent) override { throwNoCuda("streamWaitEvent"); }
  void streamWaitFlag(DeviceStream, const uint32_t*, uint32_t) override { throwNoCuda("streamWaitFlag"); }
  void ipcExport(void*, DeviceIpcHandle*) override { throwNoCuda("ipcExport"); }
  void* ipcOpen(const DeviceIpcHandle&) override { throwNoCuda("ipcOpen"); }
  void ipcClose(void*) override { throwNoCuda("ipcClose"); }
  Reducer& reducer(DeviceStream) override { throwNoCuda("reducer"); }
};

#endif  // CHORUS_HAVE_CUDA

}  // namespace

DeviceApi& cudaDeviceApi() {
  static CudaDeviceApi* api = new CudaDeviceApi();
  return *api;
}

}  // namespace chorus
