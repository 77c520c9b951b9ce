// Scalar float16 (IEEE binary16) and bfloat16 <-> float conversions, round to nearest even, as the hardware does.
//
// They are branch-free so that GCC can vectorize loops over them, and they agree bit for bit with F16C
// (vcvtph2ps / vcvtps2ph with round-to-nearest-even): a NaN stays a NaN, made quiet, keeping the top of its
// payload; infinities stay infinite; values too large for the narrow type round to infinity; float16
// subnormals are produced and read exactly. They assume the default floating-point environment (round to
// nearest, no flush-to-zero), which Chorus never changes.
#pragma once

#include <cstdint>
#include <cstring>

namespace chorus {

namespace half_detail {

// std::bit_cast without <bit>, so that the header stays usable from any translation unit.
inline uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

inline float bitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

// All ones when `condition`, else zero. Selecting with masks rather than ?: keeps the conversions free of
// branches, which GCC's if-conversion would otherwise fail to undo, and the loops over them vectorizable.
inline uint32_t maskIf(bool condition) { return 0u - static_cast<uint32_t>(condition); }

inline uint32_t selectBits(uint32_t mask, uint32_t ifSet, uint32_t ifClear) {
  return (ifSet & mask) | (ifClear & ~mask);
}

// Magnitudes (sign bit cleared) are compared as int32_t: equal to the unsigned answer below 2^31, and SSE2 has
// signed 32-bit compares but no unsigned ones.
inline int32_t signedMagnitude(uint32_t bits) { return static_cast<int32_t>(bits & 0x7fffffffu); }

}  // namespace half_detail

// The float equal to float16 `h` (every float16 is exact in float); a NaN comes back quiet.
inline float halfToFloat(uint16_t h) {
  using half_detail::maskIf, half_detail::selectBits;
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t magnitude = h & 0x7fffu;  // exponent and mantissa
  const auto compared = static_cast<int32_t>(magnitude);
  // Subnormals (and zero) are mantissa * 2^-24: an exact int->float conversion and an exact scaling.
  const uint32_t subnormal = half_detail::floatBits(static_cast<float>(compared) * 0x1p-24f);
  // Normals: rebias the exponent from 15 to 127 ((127 - 15) << 23 = 0x38000000).
  const uint32_t normal = (magnitude << 13) + 0x38000000u;
  // Infinities and NaNs: exponent all ones; NaNs get the quiet bit, as vcvtph2ps sets it.
  const uint32_t special = (magnitude << 13) | 0x7f800000u | (maskIf(compared > 0x7c00) & 0x00400000u);
  const uint32_t bits =
      selectBits(maskIf(compared < 0x0400), subnormal, selectBits(maskIf(compared >= 0x7c00), special, normal));
  return half_detail::bitsFloat(bits | sign);
}

// The float16 nearest to `f`, ties to even; overflow gives infinity, NaN a quiet NaN with the payload's top bits.
inline uint16_t floatToHalf(float f) {
  using half_detail::maskIf, half_detail::selectBits;
  const uint32_t x = half_detail::floatBits(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t magnitude = x & 0x7fffffffu;
  const int32_t compared = half_detail::signedMagnitude(x);
  // NaN: quiet bit set, top 9 payload bits kept (vcvtps2ph truncates the payload the same way).
  const uint32_t nan = 0x7e00u | ((magnitude >> 13) & 0x03ffu);
  // At or above 65520 = 0x477ff000, half way between float16's largest finite (65504, odd mantissa) and 65536,
  // the result rounds to infinity.
  const uint32_t overflow = 0x7c00u;
  // Normal float16 results: rebias the exponent, then add just under half an ulp plus the kept lsb (ties to
  // even); a carry out of the mantissa correctly bumps the exponent.
  const uint32_t rebiased = magnitude - 0x38000000u;
  const uint32_t normal = (rebiased + 0x0fffu + ((rebiased >> 13) & 1u)) >> 13;
  // Below 2^-14 the result is subnormal (or zero): adding 0.5f lines the float's ulp up with float16's
  // subnormal ulp (2^-24), so the FPU itself rounds to nearest even; the low bits are then the mantissa.
  const uint32_t subnormal = half_detail::floatBits(half_detail::bitsFloat(magnitude) + 0.5f) - 0x3f000000u;
  const uint32_t finite = selectBits(maskIf(compared < 0x38800000), subnormal, normal);
  const uint32_t result =
      selectBits(maskIf(compared > 0x7f800000), nan, selectBits(maskIf(compared >= 0x477ff000), overflow, finite));
  return static_cast<uint16_t>(result | sign);
}

// The float equal to bfloat16 `h` (bfloat16 is the top half of a float, so this is exact and keeps NaN payloads).
inline float bfloat16ToFloat(uint16_t h) { return half_detail::bitsFloat(static_cast<uint32_t>(h) << 16); }

// The bfloat16 nearest to `f`, ties to even; overflow gives infinity, NaN a quiet NaN with the payload's top bits.
inline uint16_t floatToBfloat16(float f) {
  using half_detail::maskIf, half_detail::selectBits;
  const uint32_t x = half_detail::floatBits(f);
  const uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
  const uint32_t quietNan = (x >> 16) | 0x0040u;
  return static_cast<uint16_t>(selectBits(maskIf(half_detail::signedMagnitude(x) > 0x7f800000), quietNan, rounded));
}

}  // namespace chorus
