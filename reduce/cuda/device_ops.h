// Internal: the element operations of the CUDA reduction kernels, each the device twin of the host reducer's
// (reduce/elementwise_loops.h), so that both give the same bits for every non-NaN result:
//   - integer sum and product wrap (computed in the unsigned type);
//   - floating max/min are compare-and-select, IEEE fmax/fmin on NaN (a NaN operand is ignored) and b on ties
//     (+0 vs -0 included), written exactly as the host does rather than with fmaxf, whose choice on ties differs;
//   - float16/bfloat16 widen exactly to float, compute in float, and round once to nearest even (cvt.rn);
//   - fp8 (e4m3, e5m2) likewise, rounding with CUDA's satfinite conversion (cvt.rn.satfinite on sm_89 and later,
//     its software twin before): beyond the largest finite value (infinities included) that value, NaN to NaN;
//   - average divides integers truncating toward zero and floating point with a true, correctly rounded division.
// Like the host tables, NaN results are NaN but their payloads may differ (the GPU makes arithmetic NaNs canonical).
// Compiled with --fmad=false (see sources.cmake) and without fast-math, so float arithmetic is IEEE with subnormals.
// Everything is __host__ __device__ and compiles with the host compiler too, so that a CPU test can run the very
// same code (tests/gpu/kernel_emulation_test.cc).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "chorus/chorus.h"

namespace chorus::device_ops {

template <typename T>
struct Sum {
  using Element = T;
  __host__ __device__ static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
    } else {
      return a + b;
    }
  }
};

template <typename T>
struct Prod {
  using Element = T;
  __host__ __device__ static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
    } else {
      return a * b;
    }
  }
};

template <typename T>
struct Max {
  using Element = T;
  __host__ __device__ static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return a > b ? a : b;
    } else {
      return (a > b || b != b) ? a : b;
    }
  }
};

template <typename T>
struct Min {
  using Element = T;
  __host__ __device__ static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return a < b ? a : b;
    } else {
      return (a < b || b != b) ? a : b;
    }
  }
};

// The bitwise ops, for integer types only.
template <typename T>
struct Band {
  using Element = T;
  __host__ __device__ static T apply(T a, T b) { return static_cast<T>(a & b); }
};
template <typename T>
struct Bor {
  using Element = T;
  __host__ __device__ static T apply(T a, T b) { return static_cast<T>(a | b); }
};
template <typename T>
struct Bxor {
  using Element = T;
  __host__ __device__ static T apply(T a, T b) { return static_cast<T>(a ^ b); }
};

// IEEE binary16 carried as its bits. cvt.f32.f16 is exact; cvt.rn.f16.f32 rounds to nearest even, overflows to
// infinity and keeps subnormals, as the host's floatToHalf does.
struct Float16Codec {
  using Bits = uint16_t;
  __host__ __device__ static float decode(uint16_t h) { return __half2float(__ushort_as_half(h)); }
  __host__ __device__ static uint16_t encode(float f) { return __half_as_ushort(__float2half_rn(f)); }
};

// bfloat16 is the top half of a float: widening is a shift; narrowing is cvt.rn.bf16.f32 (nearest even).
struct Bfloat16Codec {
  using Bits = uint16_t;
  __host__ __device__ static float decode(uint16_t h) {
    const uint32_t bits = static_cast<uint32_t>(h) << 16;
    float f;
    memcpy(&f, &bits, sizeof(f));
    return f;
  }
  __host__ __device__ static uint16_t encode(float f) { return __bfloat16_as_ushort(__float2bfloat16_rn(f)); }
};

// fp8 carried as its bits: decoding goes through float16, which holds every e4m3 and e5m2 value exactly (NaNs as
// NaNs); encoding is __nv_cvt_float_to_fp8 with __NV_SATFINITE, what NCCL's __nv_fp8_e4m3/e5m2 constructors use.
template <__nv_fp8_interpretation_t kFormat>
struct Fp8Codec {
  using Bits = uint8_t;
  __host__ __device__ static float decode(uint8_t b) {
    return __half2float(__half(__nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(b), kFormat)));
  }
  __host__ __device__ static uint8_t encode(float f) {
    return static_cast<uint8_t>(__nv_cvt_float_to_fp8(f, __NV_SATFINITE, kFormat));
  }
};
using Float8e4m3Codec = Fp8Codec<__NV_E4M3>;
using Float8e5m2Codec = Fp8Codec<__NV_E5M2>;

// A narrow floating-point type (16 or 8 bits) reduced in float with Op<float>, rounded back once.
template <typename Codec, template <typename> class Op>
struct Widened {
  using Element = typename Codec::Bits;
  __host__ __device__ static Element apply(Element a, Element b) {
    return Codec::encode(Op<float>::apply(Codec::decode(a), Codec::decode(b)));
  }
};

// Average's divide for a native type: integers below 32 bits divide as int, wider ones in their own type (both
// truncate toward zero, as the host's double-based and native divisions do); float and double divide natively.
template <typename T>
struct Divide {
  using Element = T;
  using Divisor = std::conditional_t<std::is_integral_v<T> && (sizeof(T) < 4), int, T>;
  __host__ __device__ static Divisor divisor(int nranks) { return static_cast<Divisor>(nranks); }
  __host__ __device__ static T apply(T x, Divisor n) { return static_cast<T>(static_cast<Divisor>(x) / n); }
};

template <typename Codec>
struct WidenedDivide {
  using Element = typename Codec::Bits;
  using Divisor = float;
  __host__ __device__ static float divisor(int nranks) { return static_cast<float>(nranks); }
  __host__ __device__ static Element apply(Element x, float n) { return Codec::encode(Codec::decode(x) / n); }
};

// A type carried as a value, to pass an op type through a generic lambda (C++17, no template lambdas).
template <typename T>
struct Tag {
  using type = T;
};

// Calls visit(Tag<Op>{}) with the element op for (type, op), op one of sum, prod, max, min, or a bitwise op of an
// integer type; returns false (and calls nothing) for any other pair.
template <typename Visit>
bool visitReduceOp(chorusDataType_t type, chorusRedOp_t op, Visit&& visit) {
  auto forNative = [&](auto element) {
    using T = typename decltype(element)::type;
    switch (op) {
      case chorusSum:
        visit(Tag<Sum<T>>{});
        return true;
      case chorusProd:
        visit(Tag<Prod<T>>{});
        return true;
      case chorusMax:
        visit(Tag<Max<T>>{});
        return true;
      case chorusMin:
        visit(Tag<Min<T>>{});
        return true;
      default:
        break;
    }
    if constexpr (std::is_integral_v<T>) {
      switch (op) {
        case chorusBand:
          visit(Tag<Band<T>>{});
          return true;
        case chorusBor:
          visit(Tag<Bor<T>>{});
          return true;
        case chorusBxor:
          visit(Tag<Bxor<T>>{});
          return true;
        default:
          break;
      }
    }
    return false;
  };
  auto forWidened = [&](auto codec) {
    using Codec = typename decltype(codec)::type;
    switch (op) {
      case chorusSum:
        visit(Tag<Widened<Codec, Sum>>{});
        return true;
      case chorusProd:
        visit(Tag<Widened<Codec, Prod>>{});
        return true;
      case chorusMax:
        visit(Tag<Widened<Codec, Max>>{});
        return true;
      case chorusMin:
        visit(Tag<Widened<Codec, Min>>{});
        return true;
      default:
        return false;
    }
  };
  switch (type) {
    case chorusInt8:
      return forNative(Tag<int8_t>{});
    case chorusUint8:
      return forNative(Tag<uint8_t>{});
    case chorusInt32:
      return forNative(Tag<int32_t>{});
    case chorusUint32:
      return forNative(Tag<uint32_t>{});
    case chorusInt64:
      return forNative(Tag<int64_t>{});
    case chorusUint64:
      return forNative(Tag<uint64_t>{});
    case chorusFloat16:
      return forWidened(Tag<Float16Codec>{});
    case chorusBfloat16:
      return forWidened(Tag<Bfloat16Codec>{});
    case chorusFloat32:
      return forNative(Tag<float>{});
    case chorusFloat64:
      return forNative(Tag<double>{});
    case chorusFloat8e4m3:
      return forWidened(Tag<Float8e4m3Codec>{});
    case chorusFloat8e5m2:
      return forWidened(Tag<Float8e5m2Codec>{});
    default:
      return false;
  }
}

// Calls visit(Tag<Divide>{}) with average's divide for `type`; returns false for an unknown type.
template <typename Visit>
bool visitDivideOp(chorusDataType_t type, Visit&& visit) {
  switch (type) {
    case chorusInt8:
      visit(Tag<Divide<int8_t>>{});
      return true;
    case chorusUint8:
      visit(Tag<Divide<uint8_t>>{});
      return true;
    case chorusInt32:
      visit(Tag<Divide<int32_t>>{});
      return true;
    case chorusUint32:
      visit(Tag<Divide<uint32_t>>{});
      return true;
    case chorusInt64:
      visit(Tag<Divide<int64_t>>{});
      return true;
    case chorusUint64:
      visit(Tag<Divide<uint64_t>>{});
      return true;
    case chorusFloat16:
      visit(Tag<WidenedDivide<Float16Codec>>{});
      return true;
    case chorusBfloat16:
      visit(Tag<WidenedDivide<Bfloat16Codec>>{});
      return true;
    case chorusFloat32:
      visit(Tag<Divide<float>>{});
      return true;
    case chorusFloat64:
      visit(Tag<Divide<double>>{});
      return true;
    case chorusFloat8e4m3:
      visit(Tag<WidenedDivide<Float8e4m3Codec>>{});
      return true;
    case chorusFloat8e5m2:
      visit(Tag<WidenedDivide<Float8e5m2Codec>>{});
      return true;
    default:
      return false;
  }
}

}  // namespace chorus::device_ops
