// The AVX2/F16C loops of the compression codec. Compiled alone with -mavx2 -mf16c (CMakeLists.txt) and called only once
// the CPU has been checked; like reduce_avx2.cc it includes no header with shared inline functions.
#include "reduce/compression_codec_kernels.h"

#if defined(__AVX2__) && defined(__F16C__)

#include <immintrin.h>

namespace chorus::compression_avx2 {
namespace {

// Eight floats to the bfloat16 bit patterns (in 32-bit lanes), nearest even; NaNs quiet.
__m256i bf16Bits(__m256i x) {
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(1));
  const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(x, _mm256_set1_epi32(0x7fff)), lsb), 16);
  const __m256i magnitude = _mm256_and_si256(x, _mm256_set1_epi32(0x7fffffff));
  const __m256i isNan = _mm256_cmpgt_epi32(magnitude, _mm256_set1_epi32(0x7f800000));
  const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(0x0040));
  return _mm256_blendv_epi8(rounded, quiet, isNan);
}

size_t bf16Encode(const void* in, size_t n, uint16_t* out, void* rounded) {
  const char* src = static_cast<const char*>(in);
  char* back = static_cast<char*>(rounded);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i a = bf16Bits(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 4 * i)));
    const __m256i b = bf16Bits(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 4 * i + 32)));
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xd8);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), packed);
    if (back) {
      // Values already at 16 bits (forwarded ones, mostly) are left alone: no cache line dirtied for nothing.
      const __m256i ra = _mm256_slli_epi32(a, 16), rb = _mm256_slli_epi32(b, 16);
      const __m256i xa = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 4 * i));
      const __m256i xb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 4 * i + 32));
      const __m256i same = _mm256_and_si256(_mm256_cmpeq_epi32(ra, xa), _mm256_cmpeq_epi32(rb, xb));
      if (_mm256_movemask_epi8(same) != -1 || back != src) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(back + 4 * i), ra);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(back + 4 * i + 32), rb);
      }
    }
  }
  return i;
}

size_t bf16Decode(const uint16_t* in, size_t n, void* out) {
  char* dst = static_cast<char*>(out);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 4 * i), _mm256_slli_epi32(wide, 16));
  }
  return i;
}

float maxAbs(const void* in, size_t n, size_t* done) {
  const char* src = static_cast<const char*>(in);
  const __m256 signless = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256 infinity = _mm256_castsi256_ps(_mm256_set1_epi32(0x7f800000));
  __m256 best = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_and_ps(_mm256_loadu_ps(reinterpret_cast<const float*>(src + 4 * i)), signless);
    const __m256 finite = _mm256_cmp_ps(v, infinity, _CMP_LT_OQ);  // false for NaN and infinity
    best = _mm256_max_ps(best, _mm256_and_ps(v, finite));
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, best);
  float m = 0;
  for (float x : lanes) m = x > m ? x : m;
  *done = i;
  return m;
}

size_t fp16Encode(const void* in, size_t n, float scale, float unscale, uint16_t* out, void* rounded) {
  const char* src = static_cast<const char*>(in);
  char* back = static_cast<char*>(rounded);
  const __m256 s = _mm256_set1_ps(scale), u = _mm256_set1_ps(unscale);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_mul_ps(_mm256_loadu_ps(reinterpret_cast<const float*>(src + 4 * i)), s);
    const __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), h);
    if (back) {
      const __m256 r = _mm256_mul_ps(_mm256_cvtph_ps(h), u);
      const __m256 x = _mm256_loadu_ps(reinterpret_cast<const float*>(src + 4 * i));
      // Bitwise: a NaN differs from itself, but is stored as its own quiet self either way.
      const __m256i same = _mm256_cmpeq_epi32(_mm256_castps_si256(r), _mm256_castps_si256(x));
      if (_mm256_movemask_epi8(same) != -1 || back != src) _mm256_storeu_ps(reinterpret_cast<float*>(back + 4 * i), r);
    }
  }
  return i;
}

size_t fp16Decode(const uint16_t* in, size_t n, float unscale, void* out) {
  char* dst = static_cast<char*>(out);
  const __m256 u = _mm256_set1_ps(unscale);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i)));
    _mm256_storeu_ps(reinterpret_cast<float*>(dst + 4 * i), _mm256_mul_ps(v, u));
  }
  return i;
}

size_t bf16DecodeAdd(const uint16_t* in, size_t n, const void* with, void* out) {
  const char* w = static_cast<const char*>(with);
  char* dst = static_cast<char*>(out);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i)));
    const __m256 v = _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
    const __m256 sum = _mm256_add_ps(v, _mm256_loadu_ps(reinterpret_cast<const float*>(w + 4 * i)));
    _mm256_storeu_ps(reinterpret_cast<float*>(dst + 4 * i), sum);
  }
  return i;
}

size_t bf16DecodeAddEncode(const uint16_t* in, size_t n, const void* with, void* out, uint16_t* compressedOut) {
  const char* w = static_cast<const char*>(with);
  char* dst = static_cast<char*>(out);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i packedIn = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    const __m128i packedIn2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i + 8));
    const __m256 va = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(packedIn), 16));
    const __m256 vb = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(packedIn2), 16));
    const __m256 sa = _mm256_add_ps(va, _mm256_loadu_ps(reinterpret_cast<const float*>(w + 4 * i)));
    const __m256 sb = _mm256_add_ps(vb, _mm256_loadu_ps(reinterpret_cast<const float*>(w + 4 * i + 32)));
    const __m256i a = bf16Bits(_mm256_castps_si256(sa)), b = bf16Bits(_mm256_castps_si256(sb));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(compressedOut + i),
                        _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xd8));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 4 * i), _mm256_slli_epi32(a, 16));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 4 * i + 32), _mm256_slli_epi32(b, 16));
  }
  return i;
}

size_t fp16DecodeAdd(const uint16_t* in, size_t n, float unscale, const void* with, void* out) {
  const char* w = static_cast<const char*>(with);
  char* dst = static_cast<char*>(out);
  const __m256 u = _mm256_set1_ps(unscale);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_mul_ps(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))), u);
    const __m256 sum = _mm256_add_ps(v, _mm256_loadu_ps(reinterpret_cast<const float*>(w + 4 * i)));
    _mm256_storeu_ps(reinterpret_cast<float*>(dst + 4 * i), sum);
  }
  return i;
}

size_t roundSignificands(void* values, size_t n, int dropped) {
  char* p = static_cast<char*>(values);
  const __m128i shift = _mm_cvtsi32_si128(dropped);
  const __m256i half = _mm256_set1_epi32(static_cast<int>((1u << (dropped - 1)) - 1));
  const __m256i keep = _mm256_set1_epi32(static_cast<int>(~((1u << dropped) - 1)));
  const __m256i one = _mm256_set1_epi32(1), exponent = _mm256_set1_epi32(0x7f800000);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 4 * i));
    const __m256i lsb = _mm256_and_si256(_mm256_srl_epi32(x, shift), one);
    __m256i r = _mm256_and_si256(_mm256_add_epi32(_mm256_add_epi32(x, half), lsb), keep);
    const __m256i special = _mm256_cmpeq_epi32(_mm256_and_si256(x, exponent), exponent);
    r = _mm256_blendv_epi8(r, x, special);
    if (_mm256_movemask_epi8(_mm256_cmpeq_epi32(r, x)) != -1) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(p + 4 * i), r);
    }
  }
  return i;
}

const Kernels kTable = {bf16Encode,    bf16Decode,          maxAbs,           fp16Encode, fp16Decode, bf16DecodeAdd,
                        fp16DecodeAdd, bf16DecodeAddEncode, roundSignificands};

}  // namespace

const Kernels* kernels() { return &kTable; }

}  // namespace chorus::compression_avx2

#else

namespace chorus::compression_avx2 {
const Kernels* kernels() { return nullptr; }
}  // namespace chorus::compression_avx2

#endif
