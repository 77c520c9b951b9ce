// The AVX2 kernel table. This file alone is compiled with -mavx2 -mf16c (see CMakeLists.txt), and is only
// called once the CPU has been checked (reduce_dispatch.cc). The generic loops are recompiled here, where the
// vectorizer uses 256-bit registers and AVX2's integer instructions (vpmulld, vpcmpgtq, ...); float16 and
// bfloat16 are hand-written: F16C converts float16, integer unpacks, adds and packs convert bfloat16, and the
// arithmetic is done in float, sixteen elements (two vectors) at a time.
//
// Nothing with external linkage may be compiled here from a shared inline function (the linker could pick this
// AVX2 copy for a baseline caller), so this file includes no header with inline functions other than the
// generic loops (namespaced per instruction set) and the intrinsics (always inlined, never emitted).
#include "reduce/reduce_kernels.h"

#if defined(__AVX2__) && defined(__F16C__)

#include <immintrin.h>

#define CHORUS_REDUCE_ISA avx2
#include "reduce/elementwise_loops.h"

namespace chorus {
namespace {

// Sixteen 16-bit values (32 bytes) as two vectors of eight floats. Which element sits in which lane is the codec's
// business: the ops are element-wise, and both operands and the result use the same arrangement.
struct FloatPair {
  __m256 lo;
  __m256 hi;
};

// float16 by F16C (round to nearest even, exactly as floatToHalf in half.h); lo holds elements 0-7, hi 8-15.
struct Float16Lanes {
  static FloatPair load(const char* p) {
    return {_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))),
            _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16)))};
  }
  static void store(char* p, FloatPair v) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(v.lo, _MM_FROUND_TO_NEAREST_INT));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p + 16), _mm256_cvtps_ph(v.hi, _MM_FROUND_TO_NEAREST_INT));
  }
};

// bfloat16 is the top half of a float: interleaving zeros below each value widens it, and narrowing rounds to
// nearest even with integer adds (exactly as floatToBfloat16 in half.h). Unpack and pack both work within 128-bit
// halves, so lo holds elements 0-3 and 8-11, hi 4-7 and 12-15, and packing restores the order with no permute.
struct Bfloat16Lanes {
  static FloatPair load(const char* p) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    const __m256i zero = _mm256_setzero_si256();
    return {_mm256_castsi256_ps(_mm256_unpacklo_epi16(zero, v)), _mm256_castsi256_ps(_mm256_unpackhi_epi16(zero, v))};
  }
  static void store(char* p, FloatPair v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm256_packus_epi32(narrow(v.lo), narrow(v.hi)));
  }

 private:
  // Each 32-bit lane's bfloat16, in its low 16 bits (so packus, which saturates signed input, keeps it).
  static __m256i narrow(__m256 v) {
    const __m256i bits = _mm256_castps_si256(v);
    const __m256i high = _mm256_srli_epi32(bits, 16);
    const __m256i lsb = _mm256_and_si256(high, _mm256_set1_epi32(1));
    const __m256i rounded =
        _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(bits, _mm256_set1_epi32(0x7fff)), lsb), 16);
    const __m256i quietNan = _mm256_or_si256(high, _mm256_set1_epi32(0x0040));
    const __m256i isNan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    return _mm256_blendv_epi8(rounded, quietNan, isNan);
  }
};

// The float ops, identical to the generic ones in elementwise_loops.h (max/min: IEEE fmax/fmin, equal -> b).
// maxps(a, b) is (a > b ? a : b), which is already right unless b alone is NaN; then a is taken.
struct SumLanes {
  static __m256 apply(__m256 a, __m256 b) { return _mm256_add_ps(a, b); }
};
struct ProdLanes {
  static __m256 apply(__m256 a, __m256 b) { return _mm256_mul_ps(a, b); }
};
struct MaxLanes {
  static __m256 apply(__m256 a, __m256 b) {
    return _mm256_blendv_ps(_mm256_max_ps(a, b), a, _mm256_cmp_ps(b, b, _CMP_UNORD_Q));
  }
};
struct MinLanes {
  static __m256 apply(__m256 a, __m256 b) {
    return _mm256_blendv_ps(_mm256_min_ps(a, b), a, _mm256_cmp_ps(b, b, _CMP_UNORD_Q));
  }
};

// dst[i] = f(a[i], b[i]) over 16-bit elements, sixteen at a time; the last partial group goes through a small
// stack buffer so that no byte outside the arrays is read or written.
template <typename Lanes, typename F>
void transformWidened(void* dst, const void* a, const void* b, size_t count, const F& f) {
  char* d = static_cast<char*>(dst);
  const char* x = static_cast<const char*>(a);
  const char* y = static_cast<const char*>(b);
  constexpr size_t kGroupBytes = 32;
  auto apply = [&f](FloatPair u, FloatPair v) { return FloatPair{f(u.lo, v.lo), f(u.hi, v.hi)}; };
  const size_t bytes = count * sizeof(uint16_t);
  size_t i = 0;
  for (; i + kGroupBytes <= bytes; i += kGroupBytes) Lanes::store(d + i, apply(Lanes::load(x + i), Lanes::load(y + i)));
  if (i < bytes) {
    alignas(32) char xs[kGroupBytes] = {};
    alignas(32) char ys[kGroupBytes] = {};
    alignas(32) char ds[kGroupBytes];
    __builtin_memcpy(xs, x + i, bytes - i);
    __builtin_memcpy(ys, y + i, bytes - i);
    Lanes::store(ds, apply(Lanes::load(xs), Lanes::load(ys)));
    __builtin_memcpy(d + i, ds, bytes - i);
  }
}

template <typename Lanes, typename Op>
void reduceWidened(void* dst, const void* a, const void* b, size_t count) {
  transformWidened<Lanes>(dst, a, b, count, [](__m256 x, __m256 y) { return Op::apply(x, y); });
}

// data[i] = data[i] / nranks, divided in float and rounded back to nearest even.
template <typename Lanes>
void averageWidened(void* data, size_t count, int nranks) {
  const __m256 n = _mm256_set1_ps(static_cast<float>(nranks));
  transformWidened<Lanes>(data, data, data, count, [n](__m256 x, __m256) { return _mm256_div_ps(x, n); });
}

template <typename Lanes>
constexpr void fillWidenedLanes(ReduceKernelTable& table, chorusDataType_t type) {
  table.reduce[type][chorusSum] = &reduceWidened<Lanes, SumLanes>;
  table.reduce[type][chorusProd] = &reduceWidened<Lanes, ProdLanes>;
  table.reduce[type][chorusMax] = &reduceWidened<Lanes, MaxLanes>;
  table.reduce[type][chorusMin] = &reduceWidened<Lanes, MinLanes>;
  table.average[type] = &averageWidened<Lanes>;
}

constexpr ReduceKernelTable makeAvx2Table() {
  ReduceKernelTable table{};
  table.name = "avx2+f16c";
  avx2::fillNativeTypes(table);
  fillWidenedLanes<Float16Lanes>(table, chorusFloat16);
  fillWidenedLanes<Bfloat16Lanes>(table, chorusBfloat16);
  return table;
}

constexpr ReduceKernelTable kAvx2Table = makeAvx2Table();

}  // namespace

const ReduceKernelTable* avx2ReduceKernels() { return &kAvx2Table; }

}  // namespace chorus

#else  // not built with AVX2 and F16C: this build has no such table

namespace chorus {

const ReduceKernelTable* avx2ReduceKernels() { return nullptr; }

}  // namespace chorus

#endif
