// The Reducer for device memory: the CUDA kernels of reduce_kernels.cu, launched on a stream the caller chooses.
#pragma once

#include <cstddef>

#include "reduce/reducer.h"
#include "chorus/chorus.h"

struct CUstream_st;  // cudaStream_t is CUstream_st*: declared here so that callers need no CUDA headers

namespace chorus {

// Reduces buffers the current CUDA device can access (device or managed memory; the caller decides with
// locateBuffer). Kernels run on the calling thread's current device, on stream() (null: the legacy default
// stream), which must belong to that device. Semantics and argument checks are the host reducer's, bit for bit
// except NaN payloads. Without CUDA (build or driver) every call with work to do throws chorusUnhandledCudaError.
//
// reduce() and finishAverage() are synchronous, like the host reducer's: they wait for the stream
// (cudaStreamSynchronize), so the caller may send or overwrite the buffers as soon as they return. The *Async
// variants only enqueue; synchronize() then waits. An instance is not safe to share between threads that set
// different streams: give each communicator or thread its own (they are cheap: one pointer).
class CudaReducer final : public Reducer {
 public:
  explicit CudaReducer(CUstream_st* stream = nullptr) : stream_(stream) {}

  // Later calls launch on `stream`.
  void setStream(CUstream_st* stream) { stream_ = stream; }
  // The stream calls launch on.
  CUstream_st* stream() const { return stream_; }

  // dst[i] = a[i] op b[i] for i < count, then waits for the stream. dst may alias a or b exactly.
  void reduce(void* dst, const void* a, const void* b, size_t count, chorusDataType_t type, chorusRedOp_t op) override;
  // data[i] /= nranks for i < count, then waits for the stream.
  void finishAverage(void* data, size_t count, chorusDataType_t type, int nranks) override;

  // As reduce(), without waiting: the result is there once synchronize() (or anything ordered after it on the
  // stream) returns.
  void reduceAsync(void* dst, const void* a, const void* b, size_t count, chorusDataType_t type, chorusRedOp_t op);
  // As finishAverage(), without waiting.
  void finishAverageAsync(void* data, size_t count, chorusDataType_t type, int nranks);
  // Waits until everything enqueued on the stream has run; throws chorusUnhandledCudaError if a kernel failed.
  void synchronize();

 private:
  CUstream_st* stream_;
};

// This thread's CudaReducer (one per thread, so that setStream on one thread never redirects another's launches).
CudaReducer& cudaReducer();

}  // namespace chorus
