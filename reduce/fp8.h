// Scalar fp8 (OCP e4m3 and e5m2) <-> float conversions, round to nearest even, saturating as NCCL does.
//
// e4m3: bias 7, 3 mantissa bits, no infinity, NaN is S.1111.111, largest finite 448. e5m2: bias 15, 2 mantissa
// bits, IEEE-like (infinities, NaNs), largest finite 57344; it is the top byte of a float16.
// Encoding follows CUDA's __nv_cvt_float_to_fp8(x, __NV_SATFINITE, ...), which NCCL's fp8 reductions use: beyond
// the largest finite value (infinities included) the result is that value with the input's sign; a NaN gives a NaN
// (e4m3 S.1111.111; e5m2 S.11111.1x, x the float's second payload bit); the sign of zero is kept. Decoding is exact
// and gives quiet NaNs. Branch-free, in the style of half.h, so that loops over them can vectorize.
#pragma once

#include <cstdint>

#include "reduce/half.h"

namespace chorus {

namespace fp8_detail {

// One fp8 format's constants, as float bit patterns: `rebias` moves the exponent from float's bias to the format's,
// `shift` drops float's extra mantissa bits.
struct Fp8Format {
  uint32_t rebias;
  uint32_t shift;
  uint32_t minNormal;       // the smallest normal, as float bits
  uint32_t maxFinite;       // the largest finite, as float bits
  uint32_t maxFiniteCode;   // and its code
  uint32_t subnormalMagic;  // the float whose ulp is the format's subnormal ulp, as bits
};

// e4m3: subnormal ulp 2^-9, so the magic is 2^(23-9) = 16384; e5m2: ulp 2^-16, magic 2^7 = 128.
inline constexpr Fp8Format kE4m3{120u << 23, 20, 0x3c800000u, 0x43e00000u, 0x7eu, 0x46800000u};
inline constexpr Fp8Format kE5m2{112u << 23, 21, 0x38800000u, 0x47600000u, 0x7bu, 0x43000000u};

inline uint8_t encodeFp8(float f, const Fp8Format& k, uint32_t nanCode) {
  using half_detail::maskIf, half_detail::selectBits;
  const uint32_t x = half_detail::floatBits(f);
  const uint32_t sign = (x >> 24) & 0x80u;
  const uint32_t magnitude = x & 0x7fffffffu;
  const int32_t compared = half_detail::signedMagnitude(x);
  // Normal results: rebias, then add just under half an ulp plus the kept lsb (ties to even); a carry out of the
  // mantissa correctly bumps the exponent.
  const uint32_t rebiased = magnitude - k.rebias;
  const uint32_t normal = (rebiased + ((1u << k.shift) >> 1) - 1u + ((rebiased >> k.shift) & 1u)) >> k.shift;
  // Below the smallest normal: adding the magic lines the float's ulp up with the format's subnormal ulp, so the FPU
  // rounds to nearest even; the low bits are then the code (reaching the smallest normal's code on a carry).
  const float magic = half_detail::bitsFloat(k.subnormalMagic);
  const uint32_t subnormal = half_detail::floatBits(half_detail::bitsFloat(magnitude) + magic) - k.subnormalMagic;
  const uint32_t finite = selectBits(maskIf(compared < static_cast<int32_t>(k.minNormal)), subnormal, normal);
  const uint32_t saturated = selectBits(maskIf(compared > static_cast<int32_t>(k.maxFinite)), k.maxFiniteCode, finite);
  const uint32_t result = selectBits(maskIf(compared > 0x7f800000), nanCode, saturated);
  return static_cast<uint8_t>(result | sign);
}

}  // namespace fp8_detail

// The float equal to e4m3 `b`; its NaNs (0x7f, 0xff) come back as quiet NaNs with their sign.
inline float fp8e4m3ToFloat(uint8_t b) {
  using half_detail::maskIf, half_detail::selectBits;
  // e4m3's exponent and mantissa placed in a float16's: the same value scaled by 2^-8 (subnormals included).
  const auto magnitude = static_cast<uint32_t>(b & 0x7fu);
  const float scaled = halfToFloat(static_cast<uint16_t>(magnitude << 7)) * 256.0f;
  const uint32_t bits = selectBits(maskIf(magnitude == 0x7fu), 0x7fc00000u, half_detail::floatBits(scaled));
  return half_detail::bitsFloat(bits | (static_cast<uint32_t>(b & 0x80u) << 24));
}

// The e4m3 nearest to `f`, ties to even; beyond +-448 (infinities too) +-448; NaN gives S.1111.111.
inline uint8_t floatToFp8e4m3(float f) { return fp8_detail::encodeFp8(f, fp8_detail::kE4m3, 0x7fu); }

// The float equal to e5m2 `b` (the top byte of a float16); NaNs come back quiet.
inline float fp8e5m2ToFloat(uint8_t b) { return halfToFloat(static_cast<uint16_t>(b << 8)); }

// The e5m2 nearest to `f`, ties to even; beyond +-57344 (infinities too) +-57344; NaN gives a quiet NaN.
inline uint8_t floatToFp8e5m2(float f) {
  const uint32_t nan = 0x7eu | ((half_detail::floatBits(f) >> 21) & 1u);
  return fp8_detail::encodeFp8(f, fp8_detail::kE5m2, nan);
}

}  // namespace chorus
