// Chooses, once per process, the fastest kernel table the CPU can run.
#include "reduce/reduce_kernels.h"
#include "core/logging.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

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
  // The compiler runtime's AVX2 check also requires the OS to save the YMM registers (XCR0), which F16C needs
  // too; F16C itself is read from CPUID leaf 1 because clang's __builtin_cpu_supports does not know it.
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2")) return false;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
#else
  return false;
#endif
}

const ReduceKernelTable& activeReduceKernels() {
  static const ReduceKernelTable& kernels = chooseKernels();
  return kernels;
}

}  // namespace chorus
