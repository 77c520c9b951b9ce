// Internal: what one thread of the CUDA reduction kernels does, and how a call is split and gridded. The kernels
// (reduce_kernels.cu) are thin wrappers over these functions; a CPU test runs the same functions for every
// (block, thread) of the grid in turn (tests/gpu/kernel_emulation_test.cc), which is exact because each element is
// read and written by one thread only, reads first.
//
// Three access paths, chosen on the host per call from the pointers:
//   kVector  every pointer has the same offset from a 16-byte boundary and is element-aligned: a scalar head up to
//            that boundary, 16-byte loads and stores (kUnroll per operand per thread per iteration, every load
//            issued before the first store), and a scalar tail. The common case; it has to run at copy bandwidth.
//   kElement element-aligned pointers with different offsets (a chunk of a user buffer against a staging buffer):
//            one element per thread per step, still coalesced.
//   kByte    some pointer is not even element-aligned: elements are assembled from bytes (rare, slow, correct).
// dst may alias a or b exactly.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "reduce/cuda/device_ops.h"

// Unrolled in device code; host compilers (which warn about nvcc's pragma) decide for themselves.
#ifdef __CUDA_ARCH__
#define CHORUS_UNROLL _Pragma("unroll")
#else
#define CHORUS_UNROLL
#endif

namespace chorus::reduce_work {

inline constexpr int kThreads = 256;    // per block, a compile-time constant inside the kernels
inline constexpr int kUnroll = 4;       // 16-byte vectors per operand per thread per iteration
inline constexpr int kBlocksPerSm = 4;  // grid cap: enough resident warps to cover memory latency, no more
inline constexpr size_t kVectorBytes = 16;

enum class Path : int { kVector, kElement, kByte };

// How one call splits `count` elements: [0, head) scalar, then `vectors` 16-byte vectors, then the scalar tail.
struct Split {
  Path path;
  size_t head;
  size_t vectors;
};

// The split for `count` elements of T at the n pointers given (the first decides the head).
template <typename T>
Split splitFor(size_t count, const void* const* pointers, int n) {
  const auto first = reinterpret_cast<uintptr_t>(pointers[0]);
  bool sameOffset = true, elementAligned = true;
  for (int i = 0; i < n; ++i) {
    const auto p = reinterpret_cast<uintptr_t>(pointers[i]);
    elementAligned = elementAligned && p % sizeof(T) == 0;
    sameOffset = sameOffset && p % kVectorBytes == first % kVectorBytes;
  }
  if (!elementAligned) return {Path::kByte, 0, 0};
  if (!sameOffset) return {Path::kElement, 0, 0};
  size_t head = (kVectorBytes - first % kVectorBytes) % kVectorBytes / sizeof(T);
  if (head > count) head = count;
  return {Path::kVector, head, (count - head) / (kVectorBytes / sizeof(T))};
}

// Blocks for a call: one thread per work item (a kUnroll group of vectors, or an element), at least one block,
// at most kBlocksPerSm per multiprocessor (the rest is grid-stride).
inline int gridFor(const Split& split, size_t count, int multiprocessors) {
  const size_t work = split.path == Path::kVector ? (split.vectors + kUnroll - 1) / kUnroll : count;
  const size_t cap = static_cast<size_t>(multiprocessors > 0 ? multiprocessors : 1) * kBlocksPerSm;
  const size_t wanted = (work + kThreads - 1) / kThreads;
  return static_cast<int>(wanted < 1 ? 1 : wanted > cap ? cap : wanted);
}

// An element at any byte address (the kByte path): memcpy of unknown alignment compiles to byte accesses.
template <typename T>
__host__ __device__ T loadBytes(const unsigned char* p) {
  T v;
  memcpy(&v, p, sizeof(T));
  return v;
}

template <typename T>
__host__ __device__ void storeBytes(unsigned char* p, T v) {
#ifdef __CUDA_ARCH__
  // Each byte is cut out of the element's bits by a bit-field extract (bfe) before its store. Storing the low byte
  // of a 16-bit register straight after cvt.rn.f16.f32 (correct PTX: st.global.u8 of that register) wrote the
  // float's integer value instead on an H100 with CUDA 13.0's ptxas (1.8125 -> 0x01 where 0x40 belongs), the high
  // byte right.
  using Bits = std::conditional_t<sizeof(T) <= 4, unsigned, unsigned long long>;
  std::conditional_t<sizeof(T) == 1, unsigned char,
                     std::conditional_t<sizeof(T) == 2, unsigned short, Bits>> raw;
  memcpy(&raw, &v, sizeof(T));
  const Bits bits = raw;
  CHORUS_UNROLL
  for (unsigned k = 0; k < sizeof(T); ++k) {
    unsigned byte;
    if constexpr (sizeof(T) <= 4) {
      asm("bfe.u32 %0, %1, %2, 8;" : "=r"(byte) : "r"(bits), "r"(8 * k));
    } else {
      unsigned long long wide;
      asm("bfe.u64 %0, %1, %2, 8;" : "=l"(wide) : "l"(bits), "r"(8 * k));
      byte = static_cast<unsigned>(wide);
    }
    p[k] = static_cast<unsigned char>(byte);
  }
#else
  memcpy(p, &v, sizeof(T));
#endif
}

// Op applied to every element of a 16-byte vector (memcpy to and from registers compiles to register moves).
template <typename Op>
__host__ __device__ uint4 applyVector(uint4 x, uint4 y) {
  using T = typename Op::Element;
  constexpr int kPerVector = kVectorBytes / sizeof(T);
  T xs[kPerVector], ys[kPerVector];
  memcpy(xs, &x, sizeof(x));
  memcpy(ys, &y, sizeof(y));
  CHORUS_UNROLL
  for (int k = 0; k < kPerVector; ++k) xs[k] = Op::apply(xs[k], ys[k]);
  uint4 r;
  memcpy(&r, xs, sizeof(r));
  return r;
}

template <typename Divide>
__host__ __device__ uint4 divideVector(uint4 x, typename Divide::Divisor n) {
  using T = typename Divide::Element;
  constexpr int kPerVector = kVectorBytes / sizeof(T);
  T xs[kPerVector];
  memcpy(xs, &x, sizeof(x));
  CHORUS_UNROLL
  for (int k = 0; k < kPerVector; ++k) xs[k] = Divide::apply(xs[k], n);
  uint4 r;
  memcpy(&r, xs, sizeof(r));
  return r;
}

// Thread `thread` of block `block` (of `blocks`, kThreads each) does its share of dst = a Op b.
template <typename Op>
__host__ __device__ void reduceAsThread(void* dstVoid, const void* aVoid, const void* bVoid, size_t count, Split split,
                                        unsigned block, unsigned blocks, unsigned thread) {
  using T = typename Op::Element;
  const size_t global = static_cast<size_t>(block) * kThreads + thread;
  const size_t threads = static_cast<size_t>(blocks) * kThreads;
  if (split.path == Path::kByte) {
    auto* d = static_cast<unsigned char*>(dstVoid);
    const auto* a = static_cast<const unsigned char*>(aVoid);
    const auto* b = static_cast<const unsigned char*>(bVoid);
    for (size_t i = global; i < count; i += threads) {
      const size_t at = i * sizeof(T);
      storeBytes<T>(d + at, Op::apply(loadBytes<T>(a + at), loadBytes<T>(b + at)));
    }
    return;
  }
  T* d = static_cast<T*>(dstVoid);
  const T* a = static_cast<const T*>(aVoid);
  const T* b = static_cast<const T*>(bVoid);
  if (split.path == Path::kElement) {
    for (size_t i = global; i < count; i += threads) d[i] = Op::apply(a[i], b[i]);
    return;
  }
  // Head and tail (each under 16 bytes) go to the first threads of the grid.
  constexpr size_t kPerVector = kVectorBytes / sizeof(T);
  const size_t tailStart = split.head + split.vectors * kPerVector;
  if (global < split.head) d[global] = Op::apply(a[global], b[global]);
  if (global < count - tailStart) d[tailStart + global] = Op::apply(a[tailStart + global], b[tailStart + global]);
  auto* dv = reinterpret_cast<uint4*>(d + split.head);
  const auto* av = reinterpret_cast<const uint4*>(a + split.head);
  const auto* bv = reinterpret_cast<const uint4*>(b + split.head);
  const size_t step = static_cast<size_t>(blocks) * kThreads * kUnroll;
  for (size_t base = static_cast<size_t>(block) * kThreads * kUnroll + thread; base < split.vectors; base += step) {
    uint4 x[kUnroll] = {}, y[kUnroll] = {};
    CHORUS_UNROLL
    for (int k = 0; k < kUnroll; ++k) {
      const size_t v = base + static_cast<size_t>(k) * kThreads;
      if (v < split.vectors) {
        x[k] = av[v];
        y[k] = bv[v];
      }
    }
    CHORUS_UNROLL
    for (int k = 0; k < kUnroll; ++k) {
      const size_t v = base + static_cast<size_t>(k) * kThreads;
      if (v < split.vectors) dv[v] = applyVector<Op>(x[k], y[k]);
    }
  }
}

// Thread `thread` of block `block` does its share of data /= n (split.path is kVector or kByte: one pointer).
template <typename Divide>
__host__ __device__ void averageAsThread(void* dataVoid, size_t count, Split split, typename Divide::Divisor n,
                                         unsigned block, unsigned blocks, unsigned thread) {
  using T = typename Divide::Element;
  const size_t global = static_cast<size_t>(block) * kThreads + thread;
  const size_t threads = static_cast<size_t>(blocks) * kThreads;
  if (split.path != Path::kVector) {
    auto* d = static_cast<unsigned char*>(dataVoid);
    for (size_t i = global; i < count; i += threads) {
      storeBytes<T>(d + i * sizeof(T), Divide::apply(loadBytes<T>(d + i * sizeof(T)), n));
    }
    return;
  }
  T* d = static_cast<T*>(dataVoid);
  constexpr size_t kPerVector = kVectorBytes / sizeof(T);
  const size_t tailStart = split.head + split.vectors * kPerVector;
  if (global < split.head) d[global] = Divide::apply(d[global], n);
  if (global < count - tailStart) d[tailStart + global] = Divide::apply(d[tailStart + global], n);
  auto* dv = reinterpret_cast<uint4*>(d + split.head);
  const size_t step = static_cast<size_t>(blocks) * kThreads * kUnroll;
  for (size_t base = static_cast<size_t>(block) * kThreads * kUnroll + thread; base < split.vectors; base += step) {
    uint4 x[kUnroll] = {};
    CHORUS_UNROLL
    for (int k = 0; k < kUnroll; ++k) {
      const size_t v = base + static_cast<size_t>(k) * kThreads;
      if (v < split.vectors) x[k] = dv[v];
    }
    CHORUS_UNROLL
    for (int k = 0; k < kUnroll; ++k) {
      const size_t v = base + static_cast<size_t>(k) * kThreads;
      if (v < split.vectors) dv[v] = divideVector<Divide>(x[k], n);
    }
  }
}

}  // namespace chorus::reduce_work
