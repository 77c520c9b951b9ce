// Host reduction kernels, hand-picked cases through every kernel set: integer wrap-around, NaN in max/min,
// float16/bfloat16 rounding, average truncation, and bad arguments.
#include "reduce/reducer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "reduce/half.h"
#include "reduce/reduce_kernels.h"
#include "core/datatype.h"
#include "core/error.h"
#include "tests/unit/reducer_kernel_sets.h"
namespace chorus {
namespace {

using test::avx2Usable;
using test::KernelSet;
using test::usableKernelSets;

// ---- Hand-picked cases, through every kernel set ----------------------------------------------------------


// Whether v, an element of `type`, is a NaN.
template <typename T>
bool isNanElement(chorusDataType_t type, T v) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(v);
  if constexpr (sizeof(T) == 2) return std::isnan(type == chorusFloat16 ? halfToFloat(v) : bfloat16ToFloat(v));
  return false;
}

// Reduces 301 copies of (a, b) in place, so that the pair goes through vector blocks and the scalar tail, and
// checks every result: equal to `expected`, or NaN when expected is NaN.
template <typename T>
void expectEvery(chorusDataType_t type, chorusRedOp_t op, T a, T b, T expected) {
  auto isNan = [type](T v) { return isNanElement(type, v); };
  for (const KernelSet& k : usableKernelSets()) {
    std::vector<T> x(301, a), y(301, b);
    k.reduce(x.data(), x.data(), y.data(), x.size(), type, op);
    for (size_t i = 0; i < x.size(); ++i) {
      if (isNan(expected) ? isNan(x[i]) : std::memcmp(&x[i], &expected, sizeof(T)) == 0) continue;
      ADD_FAILURE() << k.name << " " << typeName(type) << " " << opName(op) << "(" << +a << ", " << +b
                    << ") = " << +x[i] << " at " << i << ", expected " << +expected;
      return;
    }
  }
}

TEST(ReducerCases, IntegersWrapAround) {
  expectEvery<int8_t>(chorusInt8, chorusSum, 127, 1, -128);
  expectEvery<int8_t>(chorusInt8, chorusSum, -128, -1, 127);
  expectEvery<int8_t>(chorusInt8, chorusProd, -128, -1, -128);
  expectEvery<int8_t>(chorusInt8, chorusProd, 16, 9, -112);
  expectEvery<uint8_t>(chorusUint8, chorusSum, 255, 1, 0);
  expectEvery<uint8_t>(chorusUint8, chorusProd, 16, 16, 0);
  expectEvery<uint8_t>(chorusUint8, chorusMax, 255, 1, 255);  // an unsigned compare
  const int32_t i32max = std::numeric_limits<int32_t>::max(), i32min = std::numeric_limits<int32_t>::min();
  expectEvery<int32_t>(chorusInt32, chorusSum, i32max, 1, i32min);
  expectEvery<int32_t>(chorusInt32, chorusSum, i32min, -1, i32max);
  expectEvery<int32_t>(chorusInt32, chorusProd, 65536, 65536, 0);
  expectEvery<int32_t>(chorusInt32, chorusMax, i32min, i32max, i32max);
  expectEvery<uint32_t>(chorusUint32, chorusSum, 0xffffffffu, 2, 1);
  expectEvery<uint32_t>(chorusUint32, chorusMin, 0x80000000u, 1, 1);
  const int64_t i64max = std::numeric_limits<int64_t>::max(), i64min = std::numeric_limits<int64_t>::min();
  expectEvery<int64_t>(chorusInt64, chorusSum, i64max, 1, i64min);
  expectEvery<int64_t>(chorusInt64, chorusProd, i64min, -1, i64min);
  expectEvery<int64_t>(chorusInt64, chorusProd, int64_t{1} << 32, int64_t{1} << 32, 0);
  expectEvery<int64_t>(chorusInt64, chorusMin, i64min, i64max, i64min);
  const uint64_t u64max = std::numeric_limits<uint64_t>::max();
  expectEvery<uint64_t>(chorusUint64, chorusProd, u64max, u64max, 1);
  expectEvery<uint64_t>(chorusUint64, chorusSum, u64max, 1, 0);
  expectEvery<uint64_t>(chorusUint64, chorusMax, uint64_t{1} << 63, 2, uint64_t{1} << 63);
  expectEvery<int32_t>(chorusInt32, chorusAvg, i32max, 1, i32min);  // avg reduces as sum
}

// max/min are IEEE fmax/fmin: a NaN operand is ignored, NaN only when both are NaN.
template <typename F>
void expectMaxMinIgnoreNan(chorusDataType_t type) {
  const F nan = std::numeric_limits<F>::quiet_NaN(), inf = std::numeric_limits<F>::infinity();
  for (chorusRedOp_t op : {chorusMax, chorusMin}) {
    expectEvery<F>(type, op, nan, 1, 1);
    expectEvery<F>(type, op, 1, nan, 1);
    expectEvery<F>(type, op, nan, nan, nan);
  }
  expectEvery<F>(type, chorusMax, -inf, 2, 2);
  expectEvery<F>(type, chorusMin, -3, inf, -3);
  expectEvery<F>(type, chorusMin, -1, -2, -2);
}

// The same on 16-bit types, through their bits, with signalling NaNs too.
void expectNarrowMaxMinIgnoreNan(chorusDataType_t type, uint16_t (*encode)(float)) {
  const uint16_t one = encode(1), two = encode(2), nan = encode(std::numeric_limits<float>::quiet_NaN());
  const uint16_t signalling = type == chorusFloat16 ? 0x7d00 : 0x7f81;
  for (chorusRedOp_t op : {chorusMax, chorusMin}) {
    expectEvery<uint16_t>(type, op, nan, one, one);
    expectEvery<uint16_t>(type, op, one, nan, one);
    expectEvery<uint16_t>(type, op, nan, nan, nan);
    expectEvery<uint16_t>(type, op, signalling, two, two);
    expectEvery<uint16_t>(type, op, two, signalling, two);
  }
}

TEST(ReducerCases, FloatMaxMinIgnoreNan) {
  expectMaxMinIgnoreNan<float>(chorusFloat32);
  expectMaxMinIgnoreNan<double>(chorusFloat64);
  expectNarrowMaxMinIgnoreNan(chorusFloat16, floatToHalf);
  expectNarrowMaxMinIgnoreNan(chorusBfloat16, floatToBfloat16);
}

TEST(ReducerCases, Float16SumRoundsToNearestEven) {
  expectEvery<uint16_t>(chorusFloat16, chorusSum, 0x3c00, 0x1000, 0x3c00);   // 1 + 2^-11: tie, down to even
  expectEvery<uint16_t>(chorusFloat16, chorusSum, 0x3c01, 0x1000, 0x3c02);   // (1 + 2^-10) + 2^-11: tie, up to even
  expectEvery<uint16_t>(chorusFloat16, chorusSum, 0x7bff, 0x4c00, 0x7c00);   // 65504 + 16 = 65520 ties to infinity
  expectEvery<uint16_t>(chorusFloat16, chorusSum, 0x7bff, 0x4800, 0x7bff);   // 65504 + 8 rounds back down
  expectEvery<uint16_t>(chorusFloat16, chorusSum, 0x0001, 0x0001, 0x0002);   // subnormals add exactly
  expectEvery<uint16_t>(chorusFloat16, chorusSum, 0x03ff, 0x0001, 0x0400);   // ... into the smallest normal
  expectEvery<uint16_t>(chorusFloat16, chorusProd, 0x5c00, 0x5c00, 0x7c00);  // 256^2 overflows
  expectEvery<uint16_t>(chorusFloat16, chorusProd, 0x0400, 0x3400, 0x0100);  // 2^-14 / 4 becomes subnormal
  expectEvery<uint16_t>(chorusFloat16, chorusSum, 0x7c00, 0x3c00, 0x7c00);   // infinity stays
  expectEvery<uint16_t>(chorusFloat16, chorusSum, 0x7c00, 0xfc00, 0x7e00);   // inf - inf is NaN
  expectEvery<uint16_t>(chorusFloat16, chorusSum, 0x7e00, 0x3c00, 0x7e00);   // NaN stays NaN
}

TEST(ReducerCases, Bfloat16SumRoundsToNearestEven) {
  expectEvery<uint16_t>(chorusBfloat16, chorusSum, 0x3f80, 0x3b80, 0x3f80);  // 1 + 2^-8: tie, down to even
  expectEvery<uint16_t>(chorusBfloat16, chorusSum, 0x3f81, 0x3b80, 0x3f82);  // tie, up to even
  expectEvery<uint16_t>(chorusBfloat16, chorusSum, 0x7f7f, 0x7f7f, 0x7f80);  // largest finite doubled: infinity
  expectEvery<uint16_t>(chorusBfloat16, chorusSum, 0x0001, 0x0001, 0x0002);  // subnormals add exactly
  expectEvery<uint16_t>(chorusBfloat16, chorusSum, 0xff80, 0x7f80, 0x7fc0);  // -inf + inf is NaN
}

// finishAverage over 300 copies of `value` (vector blocks and tail) gives `expected` everywhere.
template <typename T>
void expectAverage(chorusDataType_t type, T value, int nranks, T expected) {
  for (const KernelSet& k : usableKernelSets()) {
    std::vector<T> data(300, value);
    k.average(data.data(), data.size(), type, nranks);
    for (size_t i = 0; i < data.size(); ++i) {
      if (data[i] == expected) continue;
      ADD_FAILURE() << k.name << " " << typeName(type) << " " << +value << " / " << nranks << " = " << +data[i]
                    << " at " << i << ", expected " << +expected;
      return;
    }
  }
}

TEST(ReducerCases, AverageTruncatesIntegersTowardZero) {
  expectAverage<int8_t>(chorusInt8, -7, 2, -3);
  expectAverage<int8_t>(chorusInt8, -128, 2, -64);
  expectAverage<int8_t>(chorusInt8, 127, 2, 63);
  expectAverage<int8_t>(chorusInt8, -1, 2, 0);
  expectAverage<uint8_t>(chorusUint8, 255, 2, 127);
  expectAverage<int32_t>(chorusInt32, -7, 3, -2);
  expectAverage<int32_t>(chorusInt32, std::numeric_limits<int32_t>::min(), 3, -715827882);
  expectAverage<uint32_t>(chorusUint32, 0xffffffffu, 2, 0x7fffffffu);
  expectAverage<int64_t>(chorusInt64, -9, 4, -2);
  expectAverage<int64_t>(chorusInt64, std::numeric_limits<int64_t>::min(), 3, std::numeric_limits<int64_t>::min() / 3);
  expectAverage<uint64_t>(chorusUint64, ~uint64_t{0}, 3, ~uint64_t{0} / 3);
  expectAverage<uint16_t>(chorusFloat16, 0x3c00, 3, floatToHalf(1.0f / 3.0f));  // divided in float, rounded once
  expectAverage<uint16_t>(chorusBfloat16, 0xc000, 3, floatToBfloat16(-2.0f / 3.0f));
  expectAverage<float>(chorusFloat32, 1.0f, 3, 1.0f / 3.0f);
  expectAverage<double>(chorusFloat64, -1.0, 7, -1.0 / 7.0);
}

TEST(ReducerCases, ActiveTableIsTheBestAvailable) {
  EXPECT_STREQ(activeReduceKernels().name, avx2Usable() ? "avx2+f16c" : "portable");
}

TEST(ReducerCases, RejectsBadArguments) {
  float x = 1;
  Reducer& r = hostReducer();
  EXPECT_THROW(r.reduce(&x, &x, &x, 1, static_cast<chorusDataType_t>(chorusNumTypes), chorusSum), Error);
  EXPECT_THROW(r.reduce(&x, &x, &x, 1, chorusFloat32, static_cast<chorusRedOp_t>(chorusNumOps)), Error);
  EXPECT_THROW(r.reduce(nullptr, &x, &x, 1, chorusFloat32, chorusSum), Error);
  EXPECT_THROW(r.finishAverage(&x, 1, chorusFloat32, 0), Error);
  try {
    r.finishAverage(&x, 1, chorusFloat32, -2);
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), chorusInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("-2"), std::string::npos) << e.what();
  }
  r.reduce(nullptr, nullptr, nullptr, 0, chorusFloat32, chorusSum);  // nothing to do, nothing touched
  r.finishAverage(nullptr, 0, chorusInt8, 4);
  EXPECT_EQ(x, 1.0f);
}

}  // namespace
}  // namespace chorus
