// Chooses, once per process, the fastest kernel table the CPU can run.
#include "algorithms/reduce/reduce_kernels.h"
#include "src/core/logging.h"

namespace chorus {
namespace {

const ReduceKernelTable& chooseKernels() {
  const ReduceKernelTable* avx2 = avx2ReduceKernels();
  const ReduceKernelTable& chosen = (avx2 != nullptr && cpuHasAvx2Kernels()) ? *avx2 : portableReduceKernels();
  CHORUS_INFO(-1, "host reduction kernels: " << chosen.name);
  return chosen;
}

}  // namespace

bool cpuHasAvx2Kernels() {
#if defined(__x86_64__) || defined(__i386__)
  // libgcc's check also requires the OS to save the YMM registers (XCR0), not just the CPUID bits.
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
#else
  return false;
#endif
}

const ReduceKernelTable& activeReduceKernels() {
  static const ReduceKernelTable& kernels = chooseKernels();
  return kernels;
}

}  // namespace chorus
