// IEEE float16 and bfloat16 <-> float conversions (round to nearest even), for chorus-perf's reference results.
// chorus-perf uses only the public API, so it carries its own small copy rather than the library's kernels.
#pragma once

#include <bit>
#include <cstdint>

namespace chorus::perf {

// The float16 nearest to f (ties to even; overflow to infinity; NaN stays NaN).
inline uint16_t floatToHalfBits(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;
  if (x >= (127u + 16u) << 23) {  // |f| >= 65536, infinity or NaN
    return static_cast<uint16_t>(sign | (x > 0x7f800000u ? 0x7e00u : 0x7c00u));
  }
  if (x < 113u << 23) {  // below the smallest normal half (2^-14): let the FPU round into the subnormal grid
    const uint32_t magicBits = ((127u - 15u) + (23u - 10u) + 1u) << 23;
    const float sum = std::bit_cast<float>(x) + std::bit_cast<float>(magicBits);
    return static_cast<uint16_t>(sign | (std::bit_cast<uint32_t>(sum) - magicBits));
  }
  const uint32_t mantissaOdd = (x >> 13) & 1u;
  x += (static_cast<uint32_t>(15 - 127) << 23) + 0xfffu + mantissaOdd;  // rebias; round half to even
  return static_cast<uint16_t>(sign | (x >> 13));                       // a carry into 0x7c00 is infinity
}

// The float equal to the float16 with these bits.
inline float halfBitsToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact in float
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return std::bit_cast<float>(sign | std::bit_cast<uint32_t>(magnitude));
  }
  if (exponent == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

// The bfloat16 nearest to f (ties to even; NaN stays a quiet NaN).
inline uint16_t floatToBfloat16Bits(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x0040u);
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

// The float equal to the bfloat16 with these bits.
inline float bfloat16BitsToFloat(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

}  // namespace chorus::perf
