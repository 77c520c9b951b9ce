// The AVX2 kernel table. This file alone is compiled with -mavx2 -mf16c (see CMakeLists.txt), and is only
// called once the CPU has been checked (reduce_dispatch.cc). The generic loops are recompiled here, where the
// vectorizer uses 256-bit registers and AVX2's integer instructions (vpmulld, vpcmpgtq, ...); float16 and
// bfloat16 are hand-written: F16C converts float16, integer unpacks, adds and packs convert bfloat16, and the
// arithmetic is done in float, sixteen elements (two vectors) at a time; fp8 likewise, 32 elements at a time.
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

// fp8, 32 elements (32 bytes) per group as four vectors of eight floats, elements 0-7, 8-15, 16-23, 24-31.
// Decoding goes through F16C: e5m2 is the top byte of a float16, and e4m3's exponent and mantissa placed in a
// float16's are its value times 2^-8 (subnormals included), so one multiply by 256 finishes it; its NaN
// (S.1111.111) is made a float16 NaN first. Encoding rounds to odd into float16 (F16C truncating, then the lowest
// bit set when that was inexact), which keeps enough bits for the one rounding to nearest even that follows, in
// 16-bit integer lanes, to be that of the float itself (float16 carries 7 or more bits below the fp8 lsb over the
// whole fp8 range); e4m3 is scaled by 2^-8 first, to line its codes up with float16's bits as decoding does. Then
// saturation to the largest finite value (infinities too), NaN to NaN, sign kept: fp8.h's rule.
struct E4m3Format {
  static constexpr float kScale = 0x1p-8f;
  static constexpr int kShift = 7;                   // float16 bits below the e4m3 code
  static constexpr int16_t kMaxFiniteHalf = 0x3f00;  // 448 * 2^-8 as float16
  static constexpr int16_t kMaxFiniteCode = 0x7e;
  static __m256i nanCode(__m256i) { return _mm256_set1_epi16(0x7f); }
  // Sixteen elements at p to out[0] (0-7) and out[1] (8-15).
  static void decode(const char* p, __m256* out) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i zero = _mm_setzero_si128();
    out[0] = widen(_mm_unpacklo_epi8(zero, v));
    out[1] = widen(_mm_unpackhi_epi8(zero, v));
  }

 private:
  // Eight e4m3 values in the high bytes of 16-bit lanes to floats.
  static __m256 widen(__m128i high) {
    const __m128i sign = _mm_and_si128(high, _mm_set1_epi16(static_cast<int16_t>(0x8000)));
    const __m128i magnitude = _mm_and_si128(_mm_srli_epi16(high, 1), _mm_set1_epi16(0x3f80));
    const __m128i nan = _mm_and_si128(_mm_cmpeq_epi16(magnitude, _mm_set1_epi16(0x3f80)), _mm_set1_epi16(0x7e00));
    const __m128i half = _mm_or_si128(_mm_or_si128(sign, magnitude), nan);
    return _mm256_mul_ps(_mm256_cvtph_ps(half), _mm256_set1_ps(256.0f));
  }
};

struct E5m2Format {
  static constexpr float kScale = 1.0f;
  static constexpr int kShift = 8;
  static constexpr int16_t kMaxFiniteHalf = 0x7b00;  // 57344
  static constexpr int16_t kMaxFiniteCode = 0x7b;
  // A quiet NaN keeping the float's second payload bit (float16 bit 8 after the conversion), as CUDA's does.
  static __m256i nanCode(__m256i magnitude) {
    return _mm256_or_si256(_mm256_set1_epi16(0x7e),
                           _mm256_and_si256(_mm256_srli_epi16(magnitude, 8), _mm256_set1_epi16(1)));
  }
  static void decode(const char* p, __m256* out) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i zero = _mm_setzero_si128();
    out[0] = _mm256_cvtph_ps(_mm_unpacklo_epi8(zero, v));
    out[1] = _mm256_cvtph_ps(_mm_unpackhi_epi8(zero, v));
  }
};

// Sixteen floats (a: elements 0-7, b: 8-15) to their fp8 codes, one per 16-bit lane, in order.
template <typename Format>
[[gnu::always_inline]] inline __m256i encodeFp8(__m256 a, __m256 b) {
  constexpr int kTruncate = _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC;
  const __m256 scale = _mm256_set1_ps(Format::kScale);
  const __m256 sa = _mm256_mul_ps(a, scale), sb = _mm256_mul_ps(b, scale);
  const __m128i ha = _mm256_cvtps_ph(sa, kTruncate), hb = _mm256_cvtps_ph(sb, kTruncate);
  // Inexact lanes (NaNs too, harmlessly), packed to 16 bits: packs interleaves 128-bit halves, the permute undoes it.
  const __m256i ia = _mm256_castps_si256(_mm256_cmp_ps(_mm256_cvtph_ps(ha), sa, _CMP_NEQ_UQ));
  const __m256i ib = _mm256_castps_si256(_mm256_cmp_ps(_mm256_cvtph_ps(hb), sb, _CMP_NEQ_UQ));
  const __m256i inexact = _mm256_permute4x64_epi64(_mm256_packs_epi32(ia, ib), 0xd8);
  const __m256i h = _mm256_or_si256(_mm256_set_m128i(hb, ha), _mm256_and_si256(inexact, _mm256_set1_epi16(1)));
  const __m256i sign = _mm256_and_si256(_mm256_srli_epi16(h, 8), _mm256_set1_epi16(0x80));
  const __m256i magnitude = _mm256_and_si256(h, _mm256_set1_epi16(0x7fff));
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi16(magnitude, Format::kShift), _mm256_set1_epi16(1));
  const __m256i belowHalf = _mm256_set1_epi16((1 << (Format::kShift - 1)) - 1);
  const __m256i rounded =
      _mm256_srli_epi16(_mm256_add_epi16(_mm256_add_epi16(magnitude, belowHalf), lsb), Format::kShift);
  __m256i r = _mm256_blendv_epi8(rounded, _mm256_set1_epi16(Format::kMaxFiniteCode),
                                 _mm256_cmpgt_epi16(magnitude, _mm256_set1_epi16(Format::kMaxFiniteHalf)));
  r = _mm256_blendv_epi8(r, Format::nanCode(magnitude), _mm256_cmpgt_epi16(magnitude, _mm256_set1_epi16(0x7c00)));
  return _mm256_or_si256(r, sign);
}

// dst[i] = f(a[i], b[i]) over fp8 elements, 32 at a time; the last partial group goes through stack buffers.
template <typename Format, typename F>
void transformFp8(void* dst, const void* a, const void* b, size_t count, const F& f) {
  char* d = static_cast<char*>(dst);
  const char* x = static_cast<const char*>(a);
  const char* y = static_cast<const char*>(b);
  constexpr size_t kGroupBytes = 32;
  auto group = [&f](char* out, const char* p, const char* q) {
    __m256 u[4], v[4];
    Format::decode(p, u);
    Format::decode(p + 16, u + 2);
    Format::decode(q, v);
    Format::decode(q + 16, v + 2);
    const __m256i low = encodeFp8<Format>(f(u[0], v[0]), f(u[1], v[1]));
    const __m256i high = encodeFp8<Format>(f(u[2], v[2]), f(u[3], v[3]));
    // packus works within 128-bit halves (low 0-7, high 0-7, low 8-15, high 8-15); the permute restores the order.
    const __m256i ordered = _mm256_permute4x64_epi64(_mm256_packus_epi16(low, high), 0xd8);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), ordered);
  };
  size_t i = 0;
  for (; i + kGroupBytes <= count; i += kGroupBytes) group(d + i, x + i, y + i);
  if (i < count) {
    alignas(32) char xs[kGroupBytes] = {};
    alignas(32) char ys[kGroupBytes] = {};
    alignas(32) char ds[kGroupBytes];
    __builtin_memcpy(xs, x + i, count - i);
    __builtin_memcpy(ys, y + i, count - i);
    group(ds, xs, ys);
    __builtin_memcpy(d + i, ds, count - i);
  }
}

template <typename Format, typename Op>
void reduceFp8(void* dst, const void* a, const void* b, size_t count) {
  transformFp8<Format>(dst, a, b, count, [](__m256 x, __m256 y) { return Op::apply(x, y); });
}

template <typename Format>
void averageFp8(void* data, size_t count, int nranks) {
  const __m256 n = _mm256_set1_ps(static_cast<float>(nranks));
  transformFp8<Format>(data, data, data, count, [n](__m256 x, __m256) { return _mm256_div_ps(x, n); });
}

template <typename Format>
constexpr void fillFp8(ReduceKernelTable& table, chorusDataType_t type) {
  table.reduce[type][chorusSum] = &reduceFp8<Format, SumLanes>;
  table.reduce[type][chorusProd] = &reduceFp8<Format, ProdLanes>;
  table.reduce[type][chorusMax] = &reduceFp8<Format, MaxLanes>;
  table.reduce[type][chorusMin] = &reduceFp8<Format, MinLanes>;
  table.average[type] = &averageFp8<Format>;
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
  fillFp8<E4m3Format>(table, chorusFloat8e4m3);
  fillFp8<E5m2Format>(table, chorusFloat8e5m2);
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
