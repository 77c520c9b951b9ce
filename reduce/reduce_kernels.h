// Internal: the tables of host reduction kernels, one per instruction set, and the choice among them.
// HostReducer calls through the chosen table; tests compare the tables with each other.
#pragma once

#include <cstddef>

#include "chorus/chorus.h"

namespace chorus {

// dst[i] = a[i] op b[i] for i < count; dst may alias a or b exactly; no alignment required.
using ReduceKernel = void (*)(void* dst, const void* a, const void* b, size_t count);
// data[i] /= nranks for i < count (nranks >= 1).
using AverageKernel = void (*)(void* data, size_t count, int nranks);

// Kernels are indexed by op; chorusAvg's entry is null (it reduces with the sum kernel), and so are the bitwise
// ops' entries for floating-point types (they take integers only).
inline constexpr int kReduceKernelOps = chorusNumOps;

struct ReduceKernelTable {
  const char* name;  // "portable", "avx2+f16c": for logs and test names
  ReduceKernel reduce[chorusNumTypes][kReduceKernelOps];
  AverageKernel average[chorusNumTypes];
};

// Kernels in portable C++ that the compiler vectorizes for the baseline instruction set (SSE2 on x86-64).
const ReduceKernelTable& portableReduceKernels();
// Kernels built with AVX2 and F16C; nullptr when this build has none (not x86). Call only where
// cpuHasAvx2Kernels() says the CPU can run them.
const ReduceKernelTable* avx2ReduceKernels();
// Whether this CPU (and OS) can run avx2ReduceKernels(): AVX2 and F16C are both present.
bool cpuHasAvx2Kernels();
// The fastest table this process can run, chosen on first call.
const ReduceKernelTable& activeReduceKernels();

}  // namespace chorus
