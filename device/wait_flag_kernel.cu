#include <cuda_runtime.h>

#include <cstdint>

#include "device/wait_flag_launch.h"

namespace chorus {
namespace {

// One thread is enough: the kernel only holds the stream back. The volatile reads go to memory every time (the
// host writes the flag across PCIe/NVLink), and the sleep keeps the polling from flooding the bus.
__global__ void waitFlagKernel(const volatile uint32_t* flag, uint32_t value) {
  while (static_cast<int32_t>(*flag - value) < 0) {
    __nanosleep(1000);
  }
  // Work that follows on the stream must see what the host wrote before raising the flag.
  __threadfence_system();
}

// Raises a flag after the stream's earlier work, for a peer's stream waiting on it (device windows' signals).
__global__ void writeFlagKernel(volatile uint32_t* flag, uint32_t value) {
  __threadfence_system();
  *flag = value;
}

}  // namespace

int loadWaitFlagKernel() {
  cudaFuncAttributes attributes;
  const cudaError_t error = cudaFuncGetAttributes(&attributes, reinterpret_cast<const void*>(&waitFlagKernel));
  if (error != cudaSuccess) return static_cast<int>(error);
  return static_cast<int>(cudaFuncGetAttributes(&attributes, reinterpret_cast<const void*>(&writeFlagKernel)));
}

int launchWaitFlagKernel(const uint32_t* deviceFlag, uint32_t value, CUstream_st* stream) {
  waitFlagKernel<<<1, 1, 0, stream>>>(deviceFlag, value);
  return static_cast<int>(cudaGetLastError());
}

int launchWriteFlagKernel(uint32_t* deviceFlag, uint32_t value, CUstream_st* stream) {
  writeFlagKernel<<<1, 1, 0, stream>>>(deviceFlag, value);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace chorus
