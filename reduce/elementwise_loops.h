// Internal: element-wise reduce and average loops written for the compiler's auto-vectorizer, compiled once per
// instruction set.
//
// Each including .cc first defines CHORUS_REDUCE_ISA (portable, avx2, ...): everything here lives in
// namespace chorus::CHORUS_REDUCE_ISA, so the copies built with different -m flags have different names and the
// linker can never pick an AVX2 copy of a function for a caller on the baseline path (the ODR hazard of
// per-file ISA flags). For the same reason this header calls no inline function that lives elsewhere: only
// operators, casts and type traits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "reduce/reduce_kernels.h"

#ifndef CHORUS_REDUCE_ISA
#error "define CHORUS_REDUCE_ISA (the namespace for this instruction set's kernels) before including this header"
#endif

namespace chorus::CHORUS_REDUCE_ISA {

// An element that may sit at any byte address: callers may hand us buffers that are not aligned to the element
// size, and the vectorizer must not assume they are (it would peel for alignment and then use aligned loads). A
// packed struct says so to GCC, clang and their alignment sanitizers alike (an aligned(1) typedef loses its
// attribute in some template contexts).
template <typename T>
struct __attribute__((packed)) UnalignedElement {
  T value;
};

// Elements per block: a constant inner trip count lets the compiler vectorize the block fully even under GCC's
// -O2 "very cheap" cost model, which refuses loops that would need a scalar epilogue. 256 bytes is 8 AVX2 or 16
// SSE vectors, small enough that the leftover tail is cheap.
template <typename T>
inline constexpr size_t kBlockElements = 256 / sizeof(T);

// Integer sum and product wrap: the arithmetic is done in the unsigned type, where overflow is defined.
template <typename T>
struct SumOp {
  static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
    } else {
      return a + b;
    }
  }
};

template <typename T>
struct ProdOp {
  static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
    } else {
      return a * b;
    }
  }
};

// Floating-point max and min follow IEEE fmax/fmin, as NCCL does (fmaxf/fminf): a NaN is treated as missing
// data, so max(NaN, x) = max(x, NaN) = x, and only NaN op NaN gives NaN. When a == b (including +0 and -0) the
// result is b. Written as compare-and-select, it maps onto maxps/minps plus one unordered compare and a blend;
// the AVX2 half kernels compute exactly the same.
template <typename T>
struct MaxOp {
  static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return a > b ? a : b;
    } else {
      return (a > b || b != b) ? a : b;
    }
  }
};

template <typename T>
struct MinOp {
  static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return a < b ? a : b;
    } else {
      return (a < b || b != b) ? a : b;
    }
  }
};

// The bitwise ops, for integer types only.
template <typename T>
struct BandOp {
  static T apply(T a, T b) { return static_cast<T>(a & b); }
};
template <typename T>
struct BorOp {
  static T apply(T a, T b) { return static_cast<T>(a | b); }
};
template <typename T>
struct BxorOp {
  static T apply(T a, T b) { return static_cast<T>(a ^ b); }
};

// Average's divide: integers truncate toward zero, floating point divides in its own type (a true division,
// not a multiplication by 1/n, so that the result is correctly rounded).
template <typename T>
struct DivideOp {
  // Integers of up to 32 bits divide in double: the quotient's rounding error is below 1/n, so it never crosses an
  // integer, and truncating it gives exactly x / n, with vector instructions x86 lacks for integer division.
  using Divisor = std::conditional_t<std::is_integral_v<T> && sizeof(T) == 8, T,
                                     std::conditional_t<std::is_same_v<T, float>, float, double>>;
  static Divisor divisor(int nranks) { return static_cast<Divisor>(nranks); }
  static T apply(T x, Divisor n) { return static_cast<T>(static_cast<Divisor>(x) / n); }
};

// A narrow floating-point type (16 or 8 bits) reduced in float: Codec supplies Bits (uint16_t, uint8_t),
// decode(Bits) -> float and encode(float) -> Bits (round to nearest even). The instruction set's .cc provides the
// codec, so that this header stays free of outside inline functions.
template <typename Codec, template <typename> class Op>
struct WidenedOp {
  using Bits = typename Codec::Bits;
  static Bits apply(Bits a, Bits b) { return Codec::encode(Op<float>::apply(Codec::decode(a), Codec::decode(b))); }
};

template <typename Codec>
struct WidenedDivideOp {
  using Bits = typename Codec::Bits;
  using Divisor = float;
  static float divisor(int nranks) { return static_cast<float>(nranks); }
  static Bits apply(Bits x, float n) { return Codec::encode(Codec::decode(x) / n); }
};

// Which operands are the destination itself. dst may alias a or b exactly (reduce in place), and each case gets its
// own loop in which every pointer is __restrict: the vectorizer then needs no runtime overlap check, a check that
// would send exactly the in-place case (the common one in collectives) to the scalar loop.
enum class InPlace { kNo, kFirst, kSecond, kBoth };

// d[k] = Op::apply(first, second) for k < count, with first = d[k] or p[k] and second = d[k] or q[k] as kInPlace
// says (the unused pointers are not read). p and q may alias each other, since neither is written.
template <typename T, typename Op, InPlace kInPlace>
void reduceRestrict(UnalignedElement<T>* __restrict d, const UnalignedElement<T>* __restrict p,
                    const UnalignedElement<T>* __restrict q, size_t count) {
  constexpr bool kFirstIsDst = kInPlace == InPlace::kFirst || kInPlace == InPlace::kBoth;
  constexpr bool kSecondIsDst = kInPlace == InPlace::kSecond || kInPlace == InPlace::kBoth;
  constexpr size_t kBlock = kBlockElements<T>;
  size_t i = 0;
  for (; i + kBlock <= count; i += kBlock) {
    for (size_t j = 0; j < kBlock; ++j) {
      const size_t k = i + j;
      d[k].value = Op::apply(kFirstIsDst ? d[k].value : p[k].value, kSecondIsDst ? d[k].value : q[k].value);
    }
  }
  for (; i < count; ++i) {
    d[i].value = Op::apply(kFirstIsDst ? d[i].value : p[i].value, kSecondIsDst ? d[i].value : q[i].value);
  }
}

// dst[i] = Op::apply(a[i], b[i]) for i < count.
template <typename T, typename Op>
void reduceLoop(void* dst, const void* a, const void* b, size_t count) {
  using Element = UnalignedElement<T>;
  auto* d = static_cast<Element*>(dst);
  const auto* x = static_cast<const Element*>(a);
  const auto* y = static_cast<const Element*>(b);
  if (dst == a && dst == b) {
    reduceRestrict<T, Op, InPlace::kBoth>(d, nullptr, nullptr, count);
  } else if (dst == a) {
    reduceRestrict<T, Op, InPlace::kFirst>(d, nullptr, y, count);
  } else if (dst == b) {
    reduceRestrict<T, Op, InPlace::kSecond>(d, x, nullptr, count);
  } else {
    reduceRestrict<T, Op, InPlace::kNo>(d, x, y, count);
  }
}

// data[i] = Divide::apply(data[i], divisor(nranks)) for i < count.
template <typename T, typename Divide>
void averageLoop(void* data, size_t count, int nranks) {
  auto* d = static_cast<UnalignedElement<T>*>(data);
  const typename Divide::Divisor n = Divide::divisor(nranks);
  constexpr size_t kBlock = kBlockElements<T>;
  size_t i = 0;
  for (; i + kBlock <= count; i += kBlock) {
    for (size_t j = 0; j < kBlock; ++j) d[i + j].value = Divide::apply(d[i + j].value, n);
  }
  for (; i < count; ++i) d[i].value = Divide::apply(d[i].value, n);
}

// Fills the table's entries for one natively supported type.
template <typename T>
constexpr void fillNativeType(ReduceKernelTable& table, chorusDataType_t type) {
  table.reduce[type][chorusSum] = &reduceLoop<T, SumOp<T>>;
  table.reduce[type][chorusProd] = &reduceLoop<T, ProdOp<T>>;
  table.reduce[type][chorusMax] = &reduceLoop<T, MaxOp<T>>;
  table.reduce[type][chorusMin] = &reduceLoop<T, MinOp<T>>;
  if constexpr (std::is_integral_v<T>) {
    table.reduce[type][chorusBand] = &reduceLoop<T, BandOp<T>>;
    table.reduce[type][chorusBor] = &reduceLoop<T, BorOp<T>>;
    table.reduce[type][chorusBxor] = &reduceLoop<T, BxorOp<T>>;
  }
  table.average[type] = &averageLoop<T, DivideOp<T>>;
}

// Fills the table's entries for a narrow floating-point type with the generic widening loops.
template <typename Codec>
constexpr void fillWidenedType(ReduceKernelTable& table, chorusDataType_t type) {
  using Bits = typename Codec::Bits;
  table.reduce[type][chorusSum] = &reduceLoop<Bits, WidenedOp<Codec, SumOp>>;
  table.reduce[type][chorusProd] = &reduceLoop<Bits, WidenedOp<Codec, ProdOp>>;
  table.reduce[type][chorusMax] = &reduceLoop<Bits, WidenedOp<Codec, MaxOp>>;
  table.reduce[type][chorusMin] = &reduceLoop<Bits, WidenedOp<Codec, MinOp>>;
  table.average[type] = &averageLoop<Bits, WidenedDivideOp<Codec>>;
}

// Fills every type except float16, bfloat16 and the fp8 types, which need a codec.
constexpr void fillNativeTypes(ReduceKernelTable& table) {
  fillNativeType<int8_t>(table, chorusInt8);
  fillNativeType<uint8_t>(table, chorusUint8);
  fillNativeType<int32_t>(table, chorusInt32);
  fillNativeType<uint32_t>(table, chorusUint32);
  fillNativeType<int64_t>(table, chorusInt64);
  fillNativeType<uint64_t>(table, chorusUint64);
  fillNativeType<float>(table, chorusFloat32);
  fillNativeType<double>(table, chorusFloat64);
}

}  // namespace chorus::CHORUS_REDUCE_ISA
