// The fallbacks where the driver lacks stream memory operations: for cuStreamWaitValue32, a one-thread kernel that
// polls the flag (mapped pinned or device memory) with __nanosleep between reads; for cuStreamWriteValue32, a
// one-thread kernel that stores it. Compiled only with CUDA.
#pragma once

#include <cstdint>

struct CUstream_st;

namespace chorus {

// Loads the kernels (the wait's and the write's) into the current device's context (see loadReduceKernels,
// reduce_launch.h); a cudaError_t as an int.
int loadWaitFlagKernel();

// Enqueues on `stream` a kernel that returns once (int32_t)(*deviceFlag - value) >= 0, the cyclic comparison of
// CU_STREAM_WAIT_VALUE_GEQ. deviceFlag is the device's view of pinned memory (cudaHostGetDevicePointer). Returns
// the launch's cudaError_t as an int.
int launchWaitFlagKernel(const uint32_t* deviceFlag, uint32_t value, CUstream_st* stream);

// Enqueues on `stream` a one-thread kernel that stores value into *deviceFlag behind a system-wide fence: the
// fallback for cuStreamWriteValue32. Returns the launch's cudaError_t as an int.
int launchWriteFlagKernel(uint32_t* deviceFlag, uint32_t value, CUstream_st* stream);

}  // namespace chorus
