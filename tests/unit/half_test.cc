// float16 / bfloat16 conversions (reduce/half.h) against an independent double-precision oracle,
// against the exact IEEE values of hand-picked rounding cases, and against F16C when the CPU has it.
#include "reduce/half.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define CHORUS_TEST_HAVE_F16C_PROBE 1
#endif

namespace chorus {
namespace {

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

// A binary floating-point format narrower than float: `mantissaBits` stored mantissa bits, exponent bias `bias`.
struct NarrowFormat {
  int mantissaBits;
  int bias;
  uint32_t infinityBits() const { return static_cast<uint32_t>((2 * bias + 1) << mantissaBits); }
};
constexpr NarrowFormat kFloat16{10, 15};
constexpr NarrowFormat kBfloat16{7, 127};

// The value of narrow bits `h`, computed with ldexp in double (NaN for NaNs).
double narrowValue(NarrowFormat format, uint32_t h) {
  const uint32_t mantissaMask = (1u << format.mantissaBits) - 1;
  const int exponentField = static_cast<int>((h & 0x7fffu) >> format.mantissaBits);
  const uint32_t mantissa = h & mantissaMask;
  const double sign = (h & 0x8000u) ? -1.0 : 1.0;
  if (exponentField == 2 * format.bias + 1) {
    return mantissa == 0 ? sign * std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  }
  if (exponentField == 0) return sign * std::ldexp(mantissa, 1 - format.bias - format.mantissaBits);
  return sign * std::ldexp(mantissa + (1u << format.mantissaBits), exponentField - format.bias - format.mantissaBits);
}

// The narrow bits nearest to `f`, ties to even, overflow to infinity, NaN quiet with the payload's top bits.
// Rounding is done by nearbyint on an exactly scaled double, so this shares no code or trick with half.h.
uint32_t narrowOracle(NarrowFormat format, float f) {
  const uint32_t x = bitsOf(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  if (std::isnan(f)) {
    const uint32_t quiet = 1u << (format.mantissaBits - 1);
    return sign | format.infinityBits() | quiet | (((x & 0x7fffffu) >> (23 - format.mantissaBits)) & (quiet - 1));
  }
  const double a = std::fabs(static_cast<double>(f));
  if (std::isinf(a)) return sign | format.infinityBits();
  if (a == 0) return sign;
  const int minExponent = 1 - format.bias;
  int frexpExponent;
  std::frexp(a, &frexpExponent);
  const int exponent = std::max(frexpExponent - 1, minExponent);        // a in [2^exponent, 2^(exponent+1)) unless tiny
  const double scaled = std::ldexp(a, format.mantissaBits - exponent);  // exact: a power-of-two scaling
  const auto rounded = static_cast<uint64_t>(std::nearbyint(scaled));   // default mode: to nearest, ties to even
  // One formula encodes subnormals, normals, and a round-up that carries into the next exponent.
  const uint64_t bits = (static_cast<uint64_t>(exponent - minExponent) << format.mantissaBits) + rounded;
  return sign | static_cast<uint32_t>(std::min<uint64_t>(bits, format.infinityBits()));
}

// Floats worth converting: every exponent and sign, with mantissas at and around every rounding boundary of
// both formats, plus random mantissas.
std::vector<float> interestingFloats() {
  std::vector<float> out;
  std::mt19937 rng(12345);
  const uint32_t edges[] = {0,        1,        0x0fff,   0x1000,   0x1001,   0x1fff,   0x2000,   0x3000,
                            0x7fff,   0x8000,   0x8001,   0xffff,   0x10000,  0x18000,  0x400000, 0x401000,
                            0x7fe000, 0x7fefff, 0x7ff000, 0x7ff001, 0x7fffff, 0x7f8000, 0x7f7fff, 0x7f0000};
  for (uint32_t sign = 0; sign < 2; ++sign) {
    for (uint32_t exponent = 0; exponent < 256; ++exponent) {
      for (uint32_t mantissa : edges) out.push_back(floatOf((sign << 31) | (exponent << 23) | mantissa));
      for (int i = 0; i < 300; ++i) out.push_back(floatOf((sign << 31) | (exponent << 23) | (rng() & 0x7fffffu)));
    }
  }
  return out;
}

TEST(HalfConversion, EveryFloat16DecodesExactly) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = halfToFloat(static_cast<uint16_t>(h));
    const double expected = narrowValue(kFloat16, h);
    if (std::isnan(expected)) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << h;
      EXPECT_EQ(bitsOf(f) & 0x00400000u, 0x00400000u) << "NaN not quiet: " << std::hex << h;
      EXPECT_EQ((bitsOf(f) >> 13) & 0x1ffu, h & 0x1ffu) << "payload lost: " << std::hex << h;
      EXPECT_EQ(bitsOf(f) >> 31, h >> 15) << "sign lost: " << std::hex << h;
    } else {
      ASSERT_EQ(static_cast<double>(f), expected) << std::hex << h;
      ASSERT_EQ(std::signbit(f), (h & 0x8000u) != 0) << std::hex << h;
    }
  }
}

TEST(HalfConversion, EveryBfloat16DecodesExactly) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = bfloat16ToFloat(static_cast<uint16_t>(h));
    ASSERT_EQ(bitsOf(f), h << 16) << std::hex << h;
    const double expected = narrowValue(kBfloat16, h);
    if (!std::isnan(expected)) {
      ASSERT_EQ(static_cast<double>(f), expected) << std::hex << h;
    }
  }
}

TEST(HalfConversion, Float16EncodingMatchesOracle) {
  for (float f : interestingFloats()) {
    ASSERT_EQ(floatToHalf(f), narrowOracle(kFloat16, f)) << std::hex << "float bits " << bitsOf(f);
  }
}

TEST(HalfConversion, Bfloat16EncodingMatchesOracle) {
  for (float f : interestingFloats()) {
    ASSERT_EQ(floatToBfloat16(f), narrowOracle(kBfloat16, f)) << std::hex << "float bits " << bitsOf(f);
  }
}

TEST(HalfConversion, EveryFloat16RoundTrips) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const uint16_t back = floatToHalf(halfToFloat(static_cast<uint16_t>(h)));
    const bool isNan = (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0;
    ASSERT_EQ(back, isNan ? (h | 0x200u) : h) << std::hex << h;  // NaNs come back quiet
  }
}

TEST(HalfConversion, Float16RoundingCases) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalf(0.0f), 0x0000);
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  // Ties to even: 1 + 2^-11 is half way between 1 (even) and 1 + 2^-10; 1 + 3 * 2^-11 between odd and even.
  EXPECT_EQ(floatToHalf(1.0f + 0x1p-11f), 0x3c00);
  EXPECT_EQ(floatToHalf(1.0f + 3 * 0x1p-11f), 0x3c02);
  EXPECT_EQ(floatToHalf(1.0f + 0x1p-11f + 0x1p-20f), 0x3c01);  // just above the tie
  // Largest finite, the overflow threshold (65520 ties to the "even" 65536 = infinity), infinities.
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65519.99f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00);
  EXPECT_EQ(floatToHalf(-1e9f), 0xfc00);
  EXPECT_EQ(floatToHalf(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(floatToHalf(-std::numeric_limits<float>::infinity()), 0xfc00);
  // Subnormals: 2^-24 is the smallest; 2^-25 ties between 0 (even) and it; 3 * 2^-25 ties to 2 * 2^-24.
  EXPECT_EQ(floatToHalf(0x1p-24f), 0x0001);
  EXPECT_EQ(floatToHalf(0x1p-25f), 0x0000);
  EXPECT_EQ(floatToHalf(0x1p-25f + 0x1p-40f), 0x0001);
  EXPECT_EQ(floatToHalf(3 * 0x1p-25f), 0x0002);
  EXPECT_EQ(floatToHalf(-0x1p-24f), 0x8001);
  EXPECT_EQ(floatToHalf(0x1p-14f - 0x1p-24f), 0x03ff);  // largest subnormal
  EXPECT_EQ(floatToHalf(0x1p-14f - 0x1p-25f), 0x0400);  // ties up into the smallest normal
  EXPECT_EQ(floatToHalf(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(halfToFloat(0x0001), 0x1p-24f);
  EXPECT_EQ(halfToFloat(0x03ff), 0x1p-14f - 0x1p-24f);
  EXPECT_EQ(halfToFloat(0x7bff), 65504.0f);
  EXPECT_TRUE(std::isinf(halfToFloat(0xfc00)) && halfToFloat(0xfc00) < 0);
  // NaNs stay NaN, even when only the low payload bits (dropped by the narrowing) are set.
  EXPECT_EQ(floatToHalf(std::numeric_limits<float>::quiet_NaN()) & 0x7e00, 0x7e00);
  EXPECT_EQ(floatToHalf(floatOf(0x7f800001u)), 0x7e00);
  EXPECT_EQ(floatToHalf(floatOf(0xff800001u)), 0xfe00);
  EXPECT_TRUE(std::isnan(halfToFloat(0x7c01)));
}

TEST(HalfConversion, Bfloat16RoundingCases) {
  EXPECT_EQ(floatToBfloat16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBfloat16(-0.0f), 0x8000);
  EXPECT_EQ(floatToBfloat16(1.0f + 0x1p-8f), 0x3f80);      // tie, down to even
  EXPECT_EQ(floatToBfloat16(1.0f + 3 * 0x1p-8f), 0x3f82);  // tie, up to even
  EXPECT_EQ(floatToBfloat16(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);
  EXPECT_EQ(floatToBfloat16(std::numeric_limits<float>::max()), 0x7f80);  // rounds past the largest bfloat16
  EXPECT_EQ(floatToBfloat16(floatOf(0x7f7f7fffu)), 0x7f7f);               // just below that tie
  EXPECT_EQ(floatToBfloat16(-std::numeric_limits<float>::infinity()), 0xff80);
  EXPECT_EQ(floatToBfloat16(std::numeric_limits<float>::denorm_min()), 0x0000);  // tie between 0 and 2^-133
  EXPECT_EQ(floatToBfloat16(floatOf(0x00008001u)), 0x0001);                      // float subnormals are kept
  EXPECT_EQ(floatToBfloat16(floatOf(0x7f800001u)), 0x7fc0);  // a NaN that plain truncation would make infinite
  EXPECT_EQ(floatToBfloat16(floatOf(0xffc12345u)), 0xffc1);
  EXPECT_EQ(bfloat16ToFloat(0x3f80), 1.0f);
}

#if defined(CHORUS_TEST_HAVE_F16C_PROBE)
bool cpuHasF16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
}

__attribute__((target("f16c"))) uint16_t f16cEncode(float f) { return _cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT); }
__attribute__((target("f16c"))) float f16cDecode(uint16_t h) { return _cvtsh_ss(h); }

// The AVX2 kernels convert with F16C; the portable ones with half.h. They must agree bit for bit, NaNs included.
TEST(HalfConversion, MatchesF16cBitForBit) {
  if (!cpuHasF16c()) GTEST_SKIP() << "this CPU has no F16C";
  for (uint32_t h = 0; h < 0x10000; ++h) {
    ASSERT_EQ(bitsOf(halfToFloat(static_cast<uint16_t>(h))), bitsOf(f16cDecode(static_cast<uint16_t>(h))))
        << std::hex << h;
  }
  for (float f : interestingFloats()) ASSERT_EQ(floatToHalf(f), f16cEncode(f)) << std::hex << bitsOf(f);
}
#endif

}  // namespace
}  // namespace chorus
