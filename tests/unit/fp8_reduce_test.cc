// fp8 (e4m3, e5m2) exhaustively: every byte's decoding, the scalar encoder over a sweep of floats, and every pair
// of the 256 x 256 byte values through each op of every kernel set (portable, AVX2 when the CPU has it,
// hostReducer), plus average over every byte, all against an independent reference that decodes with ldexp,
// reduces in double and rounds by searching the format's values (nearest, ties to the even code; beyond the
// largest finite value, infinities included, that value; NaN stays NaN).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "reduce/fp8.h"
#include "reduce/half.h"
#include "reduce/reducer.h"
#include "tests/unit/reducer_kernel_sets.h"

namespace chorus {
namespace {

using test::KernelSet;
using test::usableKernelSets;

struct Format {
  const char* name;
  chorusDataType_t type;
  int mantissaBits;
  int bias;
  bool hasInfinity;  // e5m2: exponent all ones is inf/NaN; e4m3: only S.1111.111 is NaN
};

constexpr Format kE4m3{"e4m3", chorusFloat8e4m3, 3, 7, false};
constexpr Format kE5m2{"e5m2", chorusFloat8e5m2, 2, 15, true};

bool isNanCode(const Format& f, uint8_t b) {
  const int magnitude = b & 0x7f;
  return f.hasInfinity ? magnitude > 0x7c : magnitude == 0x7f;
}

// The value of code b, from its fields.
double valueOf(const Format& f, uint8_t b) {
  if (isNanCode(f, b)) return std::numeric_limits<double>::quiet_NaN();
  const double sign = (b & 0x80) ? -1.0 : 1.0;
  const int exponent = (b & 0x7f) >> f.mantissaBits;
  const int mantissa = b & ((1 << f.mantissaBits) - 1);
  if (f.hasInfinity && exponent == (1 << (7 - f.mantissaBits)) - 1) return sign * INFINITY;
  if (exponent == 0) return sign * std::ldexp(mantissa, 1 - f.bias - f.mantissaBits);
  return sign * std::ldexp((1 << f.mantissaBits) + mantissa, exponent - f.bias - f.mantissaBits);
}

// The largest finite code's magnitude: e4m3 0x7e (448), e5m2 0x7b (57344).
int maxFiniteCode(const Format& f) { return f.hasInfinity ? 0x7b : 0x7e; }

// The reference rounding: the nearest of the format's finite values, ties to the even code, saturated.
uint8_t referenceEncode(const Format& f, double x) {
  if (std::isnan(x)) return 0x7f;
  const uint8_t sign = std::signbit(x) ? 0x80 : 0;
  const double magnitude = std::fabs(x);
  const int top = maxFiniteCode(f);
  if (magnitude >= valueOf(f, static_cast<uint8_t>(top))) return static_cast<uint8_t>(top | sign);
  int low = 0;  // the largest code whose value is <= magnitude (codes are monotone in value)
  while (low + 1 <= top && valueOf(f, static_cast<uint8_t>(low + 1)) <= magnitude) ++low;
  const double below = valueOf(f, static_cast<uint8_t>(low));
  if (below == magnitude) return static_cast<uint8_t>(low | sign);
  const double above = valueOf(f, static_cast<uint8_t>(low + 1));
  int code = low;
  if (magnitude - below > above - magnitude || (magnitude - below == above - magnitude && (low & 1))) code = low + 1;
  return static_cast<uint8_t>(code | sign);
}

float decodeWith(const Format& f, uint8_t b) { return f.hasInfinity ? fp8e5m2ToFloat(b) : fp8e4m3ToFloat(b); }
uint8_t encodeWith(const Format& f, float x) { return f.hasInfinity ? floatToFp8e5m2(x) : floatToFp8e4m3(x); }

std::string hex(unsigned v) {
  char text[8];
  std::snprintf(text, sizeof(text), "0x%02x", v);
  return text;
}

// Whether `got` is what `want` (a reference code) allows: the same byte, or any NaN for a NaN.
bool matches(const Format& f, uint8_t want, uint8_t got) {
  if (isNanCode(f, want)) return isNanCode(f, got);
  return want == got;
}

class Fp8Test : public ::testing::TestWithParam<Format> {};

TEST_P(Fp8Test, DecodesEveryByteExactly) {
  const Format& f = GetParam();
  for (int b = 0; b < 256; ++b) {
    const double want = valueOf(f, static_cast<uint8_t>(b));
    const float got = decodeWith(f, static_cast<uint8_t>(b));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << f.name << " " << hex(b);
    } else {
      EXPECT_EQ(static_cast<double>(got), want) << f.name << " " << hex(b);
      EXPECT_EQ(std::signbit(got), std::signbit(want)) << f.name << " " << hex(b);
      // Finite codes come back as themselves; e5m2 infinities saturate to the largest finite value.
      const int back = std::isinf(want) ? (maxFiniteCode(f) | (b & 0x80)) : b;
      EXPECT_EQ(encodeWith(f, got), back) << f.name << " round trip of " << hex(b);
    }
  }
}

TEST_P(Fp8Test, ScalarEncoderMatchesTheReferenceOverAFloatSweep) {
  const Format& f = GetParam();
  // Every 65521st float bit pattern (all exponents, signs, NaNs, subnormals), then the float16 values (which hold
  // every fp8 rounding midpoint), then the exact midpoints and their neighbours.
  std::vector<float> inputs;
  for (uint64_t u = 0; u < (uint64_t{1} << 32); u += 65521) {
    float x;
    const auto bits = static_cast<uint32_t>(u);
    std::memcpy(&x, &bits, sizeof(x));
    inputs.push_back(x);
  }
  for (uint32_t h = 0; h < 65536; ++h) inputs.push_back(halfToFloat(static_cast<uint16_t>(h)));
  for (int b = 0; b < 0x7f; ++b) {
    const double lo = valueOf(f, static_cast<uint8_t>(b)), hi = valueOf(f, static_cast<uint8_t>(b + 1));
    if (!std::isfinite(lo) || !std::isfinite(hi)) continue;
    const auto mid = static_cast<float>((lo + hi) / 2);
    for (float x : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY)}) {
      inputs.push_back(x);
      inputs.push_back(-x);
    }
  }
  for (float x : {INFINITY, -INFINITY, std::numeric_limits<float>::max(), 0.0f, -0.0f,
                  std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::denorm_min()}) {
    inputs.push_back(x);
  }
  size_t mismatches = 0;
  for (float x : inputs) {
    const uint8_t want = referenceEncode(f, x), got = encodeWith(f, x);
    if (!matches(f, want, got) && ++mismatches <= 10) {
      ADD_FAILURE() << f.name << ": encode(" << x << ") = " << hex(got) << ", want " << hex(want);
    }
  }
  EXPECT_EQ(mismatches, 0u) << "of " << inputs.size();
}

TEST_P(Fp8Test, SaturatesAsNcclDoes) {
  const Format& f = GetParam();
  const uint8_t top = static_cast<uint8_t>(maxFiniteCode(f));
  EXPECT_EQ(encodeWith(f, INFINITY), top);
  EXPECT_EQ(encodeWith(f, -INFINITY), top | 0x80);
  EXPECT_EQ(encodeWith(f, 1e30f), top);
  EXPECT_EQ(encodeWith(f, -1e30f), top | 0x80);
  EXPECT_TRUE(isNanCode(f, encodeWith(f, NAN)));
  EXPECT_EQ(encodeWith(f, -0.0f), 0x80);
  EXPECT_EQ(encodeWith(f, -1e-30f), 0x80);  // underflow keeps the sign
  if (f.hasInfinity) {
    EXPECT_EQ(encodeWith(f, 61439.0f), 0x7b);  // below the 57344/65536 midpoint
    EXPECT_EQ(encodeWith(f, 61440.0f), 0x7b);  // the midpoint: inf would be even, saturation keeps it finite
  } else {
    EXPECT_EQ(encodeWith(f, 464.0f), 0x7e);           // 448/480 midpoint, ties to even 448
    EXPECT_EQ(encodeWith(f, 470.0f), 0x7e);           // would round to 480 = the NaN code: saturates instead
    EXPECT_EQ(encodeWith(f, 0.5f + 0.03125f), 0x30);  // 0.53125 is 0.5/0.5625's midpoint: even 0.5 (0x30)
  }
}

// a[i], b[i] run over every pair of bytes: i = 256 * a + b.
struct AllPairs {
  std::vector<uint8_t> a, b;
  AllPairs() : a(65536), b(65536) {
    for (int i = 0; i < 65536; ++i) {
      a[i] = static_cast<uint8_t>(i >> 8);
      b[i] = static_cast<uint8_t>(i & 0xff);
    }
  }
};

double referenceOp(chorusRedOp_t op, double x, double y) {
  switch (op) {
    case chorusProd:
      return x * y;
    // Chorus's float max/min: IEEE fmax/fmin (a NaN operand is ignored), b on ties (+0 vs -0 included).
    case chorusMax:
      return (x > y || y != y) ? x : y;
    case chorusMin:
      return (x < y || y != y) ? x : y;
    default:
      return x + y;
  }
}

TEST_P(Fp8Test, EveryPairThroughEveryOpOfEveryKernelSet) {
  const Format& f = GetParam();
  const AllPairs pairs;
  for (chorusRedOp_t op : {chorusSum, chorusProd, chorusMax, chorusMin, chorusAvg}) {
    std::vector<uint8_t> want(65536);
    for (int i = 0; i < 65536; ++i) {
      want[i] = referenceEncode(f, referenceOp(op, valueOf(f, pairs.a[i]), valueOf(f, pairs.b[i])));
    }
    for (const KernelSet& set : usableKernelSets()) {
      // Out of place over the whole array, in place into a, and at an odd offset and length (vector loop, tail).
      std::vector<uint8_t> out(65536, 0x55), inPlace = pairs.a, odd(65536, 0x55);
      set.reduce(out.data(), pairs.a.data(), pairs.b.data(), out.size(), f.type, op);
      set.reduce(inPlace.data(), inPlace.data(), pairs.b.data(), inPlace.size(), f.type, op);
      set.reduce(odd.data() + 3, pairs.a.data() + 3, pairs.b.data() + 3, 65536 - 3 - 37, f.type, op);
      size_t mismatches = 0;
      for (int i = 0; i < 65536; ++i) {
        const bool inOdd = i >= 3 && i < 65536 - 37;
        const bool ok = matches(f, want[i], out[i]) && matches(f, want[i], inPlace[i]) &&
                        (inOdd ? matches(f, want[i], odd[i]) : odd[i] == 0x55);
        if (!ok && ++mismatches <= 10) {
          ADD_FAILURE() << f.name << " " << set.name << " op " << op << ": " << hex(pairs.a[i]) << " op "
                        << hex(pairs.b[i]) << " = " << hex(out[i]) << " / in place " << hex(inPlace[i]) << " / offset "
                        << hex(odd[i]) << ", want " << hex(want[i]);
        }
      }
      EXPECT_EQ(mismatches, 0u) << f.name << " " << set.name << " op " << op;
    }
  }
}

TEST_P(Fp8Test, AverageOfEveryByteForSeveralRankCounts) {
  const Format& f = GetParam();
  for (int nranks : {2, 3, 4, 5, 7, 8, 1000}) {
    for (const KernelSet& set : usableKernelSets()) {
      std::vector<uint8_t> data(256 * 3);  // three copies, so the vector loop runs too
      for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i);
      set.average(data.data(), data.size(), f.type, nranks);
      for (size_t i = 0; i < data.size(); ++i) {
        const auto b = static_cast<uint8_t>(i);
        const uint8_t want = referenceEncode(f, valueOf(f, b) / nranks);
        EXPECT_TRUE(matches(f, want, data[i])) << f.name << " " << set.name << ": " << hex(b) << " / " << nranks
                                               << " = " << hex(data[i]) << ", want " << hex(want);
      }
    }
  }
}

TEST_P(Fp8Test, BitwiseOpsAreRejected) {
  const Format& f = GetParam();
  uint8_t x = 0x38;
  for (chorusRedOp_t op : {chorusBand, chorusBor, chorusBxor}) {
    EXPECT_ANY_THROW(hostReducer().reduce(&x, &x, &x, 1, f.type, op)) << f.name << " op " << op;
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, Fp8Test, ::testing::Values(kE4m3, kE5m2),
                         [](const ::testing::TestParamInfo<Format>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace chorus
