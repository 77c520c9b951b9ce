// The CUDA reduction kernels: thin __global__ wrappers over reduce_thread_work.h, instantiated for every
// datatype x op (device_ops.h), and their launchers (reduce_launch.h).
#include <cuda_runtime.h>

#include "reduce/cuda/device_ops.h"
#include "reduce/cuda/reduce_launch.h"
#include "reduce/cuda/reduce_thread_work.h"

namespace chorus {
namespace {

using reduce_work::kThreads;
using reduce_work::Split;

template <typename Op>
__global__ void __launch_bounds__(kThreads)
    reduceKernel(void* dst, const void* a, const void* b, size_t count, Split split) {
  reduce_work::reduceAsThread<Op>(dst, a, b, count, split, blockIdx.x, gridDim.x, threadIdx.x);
}

template <typename Divide>
__global__ void __launch_bounds__(kThreads)
    averageKernel(void* data, size_t count, Split split, typename Divide::Divisor n) {
  reduce_work::averageAsThread<Divide>(data, count, split, n, blockIdx.x, gridDim.x, threadIdx.x);
}

}  // namespace

cudaError_t loadReduceKernels() {
  cudaError_t first = cudaSuccess;
  auto load = [&](const void* kernel) {
    cudaFuncAttributes attributes;
    const cudaError_t error = cudaFuncGetAttributes(&attributes, kernel);
    if (first == cudaSuccess) first = error;
  };
  for (int type = 0; type < chorusNumTypes; ++type) {
    for (chorusRedOp_t op : {chorusSum, chorusProd, chorusMax, chorusMin, chorusBand, chorusBor, chorusBxor}) {
      device_ops::visitReduceOp(static_cast<chorusDataType_t>(type), op, [&](auto tag) {
        using Op = typename decltype(tag)::type;
        load(reinterpret_cast<const void*>(&reduceKernel<Op>));
      });
    }
    device_ops::visitDivideOp(static_cast<chorusDataType_t>(type), [&](auto tag) {
      using Divide = typename decltype(tag)::type;
      load(reinterpret_cast<const void*>(&averageKernel<Divide>));
    });
  }
  return first;
}

cudaError_t launchReduceKernel(void* dst, const void* a, const void* b, size_t count, chorusDataType_t type,
                               chorusRedOp_t op, cudaStream_t stream, int multiprocessors) {
  if (count == 0) return cudaSuccess;
  const bool known = device_ops::visitReduceOp(type, op, [&](auto tag) {
    using Op = typename decltype(tag)::type;
    const void* pointers[] = {dst, a, b};
    const Split split = reduce_work::splitFor<typename Op::Element>(count, pointers, 3);
    reduceKernel<Op>
        <<<reduce_work::gridFor(split, count, multiprocessors), kThreads, 0, stream>>>(dst, a, b, count, split);
  });
  return known ? cudaGetLastError() : cudaErrorInvalidValue;
}

cudaError_t launchAverageKernel(void* data, size_t count, chorusDataType_t type, int nranks, cudaStream_t stream,
                                int multiprocessors) {
  if (count == 0 || nranks == 1) return cudaSuccess;
  if (nranks < 1) return cudaErrorInvalidValue;
  const bool known = device_ops::visitDivideOp(type, [&](auto tag) {
    using Divide = typename decltype(tag)::type;
    const void* pointers[] = {data};
    const Split split = reduce_work::splitFor<typename Divide::Element>(count, pointers, 1);
    averageKernel<Divide><<<reduce_work::gridFor(split, count, multiprocessors), kThreads, 0, stream>>>(
        data, count, split, Divide::divisor(nranks));
  });
  return known ? cudaGetLastError() : cudaErrorInvalidValue;
}

}  // namespace chorus
