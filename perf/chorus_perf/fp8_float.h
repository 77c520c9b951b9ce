// fp8 (e4m3, e5m2) <-> float conversions for chorus-perf's reference results: round to nearest even, saturating
// to the largest finite value as the library does (chorus.h). chorus-perf uses only the public API, so it carries
// its own small, plain copy rather than the library's kernels.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace chorus::perf {

// One fp8 format: mantissa bits, exponent bias, and whether exponent all ones means inf/NaN (e5m2) or only
// S.1111.111 is NaN (e4m3).
struct Fp8Layout {
  int mantissaBits;
  int bias;
  bool ieeeSpecials;
  int maxFiniteCode() const { return ieeeSpecials ? 0x7b : 0x7e; }
};

inline constexpr Fp8Layout kE4m3Layout{3, 7, false};
inline constexpr Fp8Layout kE5m2Layout{2, 15, true};

inline float fp8BitsToFloat(uint8_t b, Fp8Layout k) {
  const float sign = (b & 0x80) ? -1.0f : 1.0f;
  const int magnitude = b & 0x7f;
  const int exponent = magnitude >> k.mantissaBits;
  const int mantissa = magnitude & ((1 << k.mantissaBits) - 1);
  if (k.ieeeSpecials ? exponent == (1 << (7 - k.mantissaBits)) - 1 : magnitude == 0x7f) {
    return mantissa == 0 && k.ieeeSpecials ? sign * INFINITY : NAN;
  }
  if (exponent == 0) return sign * std::ldexp(static_cast<float>(mantissa), 1 - k.bias - k.mantissaBits);
  return sign * std::ldexp(static_cast<float>((1 << k.mantissaBits) + mantissa), exponent - k.bias - k.mantissaBits);
}

inline uint8_t floatToFp8Bits(float f, Fp8Layout k) {
  if (std::isnan(f)) return 0x7f;
  const auto sign = static_cast<uint8_t>(std::signbit(f) ? 0x80 : 0);
  const double a = std::fabs(static_cast<double>(f));
  const int top = k.maxFiniteCode();
  if (a >= fp8BitsToFloat(static_cast<uint8_t>(top), k)) return static_cast<uint8_t>(top | sign);
  if (a == 0) return sign;
  int e = 0;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  const int quantum = std::max(e - 1, 1 - k.bias) - k.mantissaBits;
  const double units = std::nearbyint(std::ldexp(a, -quantum));  // ties to even in the default rounding mode
  // units * 2^quantum as a code: subnormals are plain multiples of the smallest quantum; normals carry into the
  // exponent field naturally when units reaches 2^(mantissaBits + 1).
  const int smallest = 1 - k.bias - k.mantissaBits;
  const int code = quantum == smallest ? static_cast<int>(units)
                                       : ((quantum - smallest) << k.mantissaBits) + static_cast<int>(units);
  return static_cast<uint8_t>(std::min(code, top) | sign);
}

inline uint8_t floatToFp8e4m3Bits(float f) { return floatToFp8Bits(f, kE4m3Layout); }
inline float fp8e4m3BitsToFloat(uint8_t b) { return fp8BitsToFloat(b, kE4m3Layout); }
inline uint8_t floatToFp8e5m2Bits(float f) { return floatToFp8Bits(f, kE5m2Layout); }
inline float fp8e5m2BitsToFloat(uint8_t b) { return fp8BitsToFloat(b, kE5m2Layout); }

}  // namespace chorus::perf
