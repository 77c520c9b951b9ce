// Internal: launchers for the CUDA reduction kernels (reduce_kernels.cu). CudaReducer is their only caller outside
// tests and benchmarks; it checks arguments, picks the device's multiprocessor count and waits for the stream.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "chorus/chorus.h"

namespace chorus {

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
