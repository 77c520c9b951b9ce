// The kernel tables a reducer test can run against: portable, AVX2 (when this CPU has it), and hostReducer().
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "reduce/reduce_kernels.h"
#include "reduce/reducer.h"

namespace chorus::test {

// ---- The kernel sets under test ---------------------------------------------------------------------------

struct KernelSet {
  std::string name;
  std::function<void(void*, const void*, const void*, size_t, chorusDataType_t, chorusRedOp_t)> reduce;
  std::function<void(void*, size_t, chorusDataType_t, int)> average;
};

inline KernelSet tableSet(const ReduceKernelTable& table) {
  return {table.name,
          [&table](void* d, const void* a, const void* b, size_t n, chorusDataType_t t, chorusRedOp_t op) {
            table.reduce[t][op == chorusAvg ? chorusSum : op](d, a, b, n);
          },
          [&table](void* d, size_t n, chorusDataType_t t, int nranks) { table.average[t](d, n, nranks); }};
}

inline bool avx2Usable() { return avx2ReduceKernels() != nullptr && cpuHasAvx2Kernels(); }

enum class Kernels { kPortable, kAvx2, kHostReducer };

inline KernelSet kernelSet(Kernels which) {
  switch (which) {
    case Kernels::kPortable:
      return tableSet(portableReduceKernels());
    case Kernels::kAvx2:
      return tableSet(*avx2ReduceKernels());
    default:
      return {"hostReducer",
              [](void* d, const void* a, const void* b, size_t n, chorusDataType_t t, chorusRedOp_t op) {
                hostReducer().reduce(d, a, b, n, t, op);
              },
              [](void* d, size_t n, chorusDataType_t t, int nranks) { hostReducer().finishAverage(d, n, t, nranks); }};
  }
}

inline std::vector<KernelSet> usableKernelSets() {
  std::vector<KernelSet> sets = {kernelSet(Kernels::kPortable), kernelSet(Kernels::kHostReducer)};
  if (avx2Usable()) sets.push_back(kernelSet(Kernels::kAvx2));
  return sets;
}
}  // namespace chorus::test
