// Internal: launchers for the CUDA reduction kernels (reduce_kernels.cu). CudaReducer is their only caller outside
// tests and benchmarks; it checks arguments, picks the device's multiprocessor count and waits for the stream.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "chorus/chorus.h"

namespace chorus {

// Loads every reduction and average kernel into the current device's context now (cudaFuncGetAttributes), so that
// no launch has to load its module later: under CUDA's lazy loading (the default since 12.2) the first launch of a
// kernel loads it, and a load waits for the device while a stream sits in a wait on a host flag that only this
// process's progress thread raises, so that launch never returned (seen on an H100, driver 580). Returns the first
// error.
cudaError_t loadReduceKernels();

// Enqueues dst[i] = a[i] op b[i] for i < count on `stream` (current device), op one of sum, prod, max, min
// (the caller maps avg to sum). dst may alias a or b exactly; any alignment, any count > 0. Returns the launch's
// error; the kernel's own failures show up at the next synchronization. `multiprocessors` sizes the grid.
cudaError_t launchReduceKernel(void* dst, const void* a, const void* b, size_t count, chorusDataType_t type,
                               chorusRedOp_t op, cudaStream_t stream, int multiprocessors);

// Enqueues data[i] /= nranks for i < count (nranks >= 1) on `stream`, with the host reducer's rounding: integers
// truncate toward zero, float16/bfloat16 divide in float and round to nearest even. Returns the launch's error.
cudaError_t launchAverageKernel(void* data, size_t count, chorusDataType_t type, int nranks, cudaStream_t stream,
                                int multiprocessors);

}  // namespace chorus
